/**
 * Resemblyzer's GE2E speaker encoder (legacy PyTorch checkpoint) -> ONNX (opset 17), so onnxruntime's LSTM kernels run it.
 *
 * Graph: mels [batch, frames, 40] -> Transpose to time-major (onnxruntime's LSTM has no batch-first layout) -> 3 LSTM
 * layers (hidden 256) -> last layer's final hidden state -> Gemm 256x256 -> Relu -> L2 normalisation -> embedding
 * [batch, 256]. The output is byte-for-byte deterministic for a given checkpoint (fixed names, order and producer), so
 * the catalog can verify it by sha256.
 */
import { writeFile } from 'node:fs/promises';
import { VoxError } from '../../core/errors.js';
import {
  encodeModel,
  floatTensor,
  floatValueInfo,
  intAttribute,
  intsAttribute,
  node,
  onnx,
  type NodeProto,
  type TensorProto,
} from './onnx-graph.js';
import { readLegacyTorchStateDict, type NamedTensor } from './torch-legacy.js';

export const ge2eMelBands = 40;
export const ge2eHiddenSize = 256;
export const ge2eEmbeddingSize = 256;
const layerCount = 3;
const opsetVersion = 17;
/** IR version 8 is the one that goes with opset 17. */
const irVersion = 8;

/** PyTorch stores LSTM gates as (input, forget, cell, output); ONNX wants (input, output, forget, cell). */
const onnxGateOrderFromTorch = [0, 3, 1, 2];

export interface Ge2eConversion {
  /** Path of Resemblyzer's `pretrained.pt`. */
  torchPath: string;
  outputPath: string;
}

export async function convertGe2eToOnnx({ torchPath, outputPath }: Ge2eConversion): Promise<void> {
  const tensors = await readLegacyTorchStateDict(torchPath, { entry: 'model_state' });
  await writeFile(outputPath, buildGe2eOnnx(tensors));
}

/** Serialised ONNX model from the encoder's state dict. */
export function buildGe2eOnnx(tensors: Map<string, NamedTensor>): Uint8Array {
  const get = (name: string, shape: number[]): Float32Array => {
    const tensor = tensors.get(name);
    if (!tensor) throw new VoxError('internal', `GE2E checkpoint lacks ${name}.`);
    if (tensor.shape.join('x') !== shape.join('x')) {
      throw new VoxError('internal', `GE2E checkpoint: ${name} has shape [${tensor.shape.join(', ')}], expected [${shape.join(', ')}].`);
    }
    return tensor.data;
  };

  const initializers: TensorProto[] = [];
  const nodes: NodeProto[] = [];
  const squeezeAxes = (name: string, axes: number[]): string => {
    initializers.push(onnx.TensorProto.create({ name, dims: [axes.length], dataType: onnx.TensorProto.DataType.INT64, int64Data: axes }));
    return name;
  };
  const axis0 = squeezeAxes('axes_0', [0]);
  const axis1 = squeezeAxes('axes_1', [1]);

  nodes.push(node('Transpose', ['mels'], ['mels_time_major'], 'to_time_major', [intsAttribute('perm', [1, 0, 2])]));
  let layerInput = 'mels_time_major';
  let finalHidden = '';
  for (let layer = 0; layer < layerCount; layer++) {
    const inputSize = layer === 0 ? ge2eMelBands : ge2eHiddenSize;
    const w = reorderGates(get(`lstm.weight_ih_l${layer}`, [4 * ge2eHiddenSize, inputSize]), inputSize);
    const r = reorderGates(get(`lstm.weight_hh_l${layer}`, [4 * ge2eHiddenSize, ge2eHiddenSize]), ge2eHiddenSize);
    const biasIh = reorderGates(get(`lstm.bias_ih_l${layer}`, [4 * ge2eHiddenSize]), 1);
    const biasHh = reorderGates(get(`lstm.bias_hh_l${layer}`, [4 * ge2eHiddenSize]), 1);
    const b = new Float32Array(8 * ge2eHiddenSize);
    b.set(biasIh, 0);
    b.set(biasHh, 4 * ge2eHiddenSize);
    initializers.push(
      floatTensor(`lstm${layer}_W`, [1, 4 * ge2eHiddenSize, inputSize], w),
      floatTensor(`lstm${layer}_R`, [1, 4 * ge2eHiddenSize, ge2eHiddenSize], r),
      floatTensor(`lstm${layer}_B`, [1, 8 * ge2eHiddenSize], b),
    );
    const last = layer === layerCount - 1;
    const sequenceOutput = last ? '' : `lstm${layer}_Y`;
    const hiddenOutput = last ? `lstm${layer}_Y_h` : '';
    nodes.push(
      node('LSTM', [layerInput, `lstm${layer}_W`, `lstm${layer}_R`, `lstm${layer}_B`], [sequenceOutput, hiddenOutput], `lstm${layer}`, [
        intAttribute('hidden_size', ge2eHiddenSize),
        stringAttribute('direction', 'forward'),
      ]),
    );
    if (last) {
      // Y_h is [num_directions, batch, hidden].
      finalHidden = `lstm${layer}_final_hidden`;
      nodes.push(node('Squeeze', [hiddenOutput, axis0], [finalHidden], `lstm${layer}_squeeze`));
    } else {
      // Y is [frames, num_directions, batch, hidden]: drop the direction axis for the next layer.
      layerInput = `lstm${layer}_output`;
      nodes.push(node('Squeeze', [sequenceOutput, axis1], [layerInput], `lstm${layer}_squeeze`));
    }
  }

  initializers.push(
    floatTensor('linear_weight', [ge2eEmbeddingSize, ge2eHiddenSize], get('linear.weight', [ge2eEmbeddingSize, ge2eHiddenSize])),
    floatTensor('linear_bias', [ge2eEmbeddingSize], get('linear.bias', [ge2eEmbeddingSize])),
  );
  nodes.push(
    node('Gemm', [finalHidden, 'linear_weight', 'linear_bias'], ['linear_output'], 'linear', [intAttribute('transB', 1)]),
    node('Relu', ['linear_output'], ['relu_output'], 'relu'),
    node('LpNormalization', ['relu_output'], ['embedding'], 'l2_normalise', [intAttribute('axis', 1), intAttribute('p', 2)]),
  );

  return encodeModel({
    producer: 'ge2e-to-onnx',
    irVersion,
    opsetVersion,
    graphName: 'ge2e_speaker_encoder',
    nodes,
    initializers,
    inputs: [floatValueInfo('mels', ['batch', 'frames', ge2eMelBands])],
    outputs: [floatValueInfo('embedding', ['batch', ge2eEmbeddingSize])],
  });
}

/** Rows come in four gate blocks of `hidden` rows each, every row `rowLength` long. */
function reorderGates(torchRows: Float32Array, rowLength: number): Float32Array {
  const block = ge2eHiddenSize * rowLength;
  const out = new Float32Array(torchRows.length);
  onnxGateOrderFromTorch.forEach((torchGate, onnxGate) => {
    out.set(torchRows.subarray(torchGate * block, (torchGate + 1) * block), onnxGate * block);
  });
  return out;
}

function stringAttribute(name: string, value: string) {
  return new onnx.AttributeProto({ name, type: onnx.AttributeProto.AttributeType.STRING, s: new TextEncoder().encode(value) });
}

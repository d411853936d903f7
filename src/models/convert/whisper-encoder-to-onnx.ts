/**
 * Whisper's audio encoder from a whisper.cpp ggml file (f16 or f32 tensors) -> ONNX (opset 20), built node by node:
 * conv1 + GELU, conv2 (stride 2) + GELU, + the positional embedding, pre-LayerNorm blocks of multi-head self-attention
 * (query and key each scaled by head_size^-0.25, the key without bias) and MLP, then the final LayerNorm; what
 * whisper.cpp's conv and encoder graphs compute.
 *
 * Input `mel` [1, n_mels, frames]: the window's log-mel frames as whisper.cpp hands them to its conv graph; frames is
 * dynamic (2 x the encoder context, which whisper.cpp cuts for short audio), so the positional embedding is sliced to
 * the conv output's length. Output `embd` [1, frames / 2, n_state].
 *
 * 'int8': linear layers' weights are symmetric int8 per output channel; their input is quantised at run time
 * (DynamicQuantizeLinear, uint8), multiplied as integers (MatMulInteger) and scaled back (activation scale x channel
 * scale) before the bias: the pattern onnxruntime fuses into one quantised matrix product. Convolutions, the attention
 * products and the linear layers of float32LinearsInInt8 stay float32. On this machine's CPU (1 thread, a 30 s window)
 * it takes about 0.65-0.75 s of CPU against 1.0-1.1 s for the float32 graph and 1.7 s for whisper.cpp's f16 encoder.
 * Output bytes are deterministic for a given ggml file.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { encodeModel, floatValueInfo, GraphBuilder, intAttribute, intsAttribute, node, onnx, TensorType } from './onnx-graph.js';

export type WhisperEncoderPrecision = 'float32' | 'int8';

const opsetVersion = 20;
const irVersion = 9;
const layerNormEpsilon = 1e-5;
const ggmlMagic = 0x67676d6c;
/**
 * Linear layers the int8 graph keeps in float32: their inputs have outlier channels that one activation scale per
 * tensor cannot represent. All int8, whisper base's output differed from whisper.cpp's by 14.5% (norm of the difference
 * over the norm of the output; a 30 s window of English or of Spanish speech) and some frames pointed elsewhere (cosine
 * 0.01-0.04); with the first block and block 3's second MLP layer in float32, by 3.8-4.0% (cosine 0.82 or more), for
 * about 0.05 s more CPU per window. No other single layer or block in float32 helped as much.
 */
const float32LinearsInInt8 = /^encoder\.blocks\.0\.|^encoder\.blocks\.3\.mlp\.2$/;

export interface WhisperEncoderConversion {
  ggmlPath: string;
  outputPath: string;
  precision: WhisperEncoderPrecision;
  /** Keep only the first blocks (see `WhisperEncoderGraphOptions`). */
  truncate?: WhisperEncoderGraphOptions;
}

export async function convertWhisperEncoderToOnnx({ ggmlPath, outputPath, precision, truncate }: WhisperEncoderConversion): Promise<void> {
  await writeFile(outputPath, buildWhisperEncoderOnnx(readGgmlEncoder(await readFile(ggmlPath)), precision, truncate));
}

/**
 * A truncated encoder (voice conversion's content features, issue 36): `layers` blocks, and the output `embd` is the
 * residual stream after them (no final LayerNorm). `blockOutputs`: every block's residual stream is also an output,
 * `block_<l>` (l from 1), for measuring which layer to keep.
 */
export interface WhisperEncoderGraphOptions {
  layers: number;
  blockOutputs?: boolean;
  /**
   * What is added to the conv output before the blocks: 'absolute' Whisper's positional embedding (default); 'mean' its
   * mean row over the 1500 positions, the same for every frame, so a frame's features do not depend on where in the
   * window it lies (content features must match the same sound at any time offset; bench/vc-content-features.ts);
   * 'none' nothing.
   */
  positions?: 'absolute' | 'mean' | 'none';
}

export interface GgmlEncoder {
  heads: number;
  layers: number;
  tensors: Map<string, { shape: number[]; data: Float32Array }>;
}

/** IEEE half -> float for every bit pattern. */
const halfTable = ((): Float32Array => {
  const table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >> 10) & 0x1f;
    const fraction = h & 0x3ff;
    table[h] =
      exponent === 0
        ? sign * 2 ** -14 * (fraction / 1024)
        : exponent === 31
          ? fraction
            ? NaN
            : sign * Infinity
          : sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
  }
  return table;
})();

/** The encoder's tensors of a ggml Whisper file (shapes in PyTorch order); reading stops at the first decoder tensor. */
export function readGgmlEncoder(file: Buffer): GgmlEncoder {
  let offset = 0;
  const i32 = (): number => {
    const v = file.readInt32LE(offset);
    offset += 4;
    return v;
  };
  if (file.readUInt32LE(0) !== ggmlMagic) throw new Error('not a whisper.cpp ggml file');
  offset = 4;
  // n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer, n_text_ctx, n_text_state, n_text_head, n_text_layer, n_mels, ftype
  const hyperparameters = Array.from({ length: 11 }, i32);
  const melBins = i32();
  const fftBins = i32();
  offset += melBins * fftBins * 4;
  const words = i32();
  for (let w = 0; w < words; w++) {
    const length = i32();
    offset += length;
  }
  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  while (offset < file.length) {
    const rank = i32();
    const nameLength = i32();
    const type = i32();
    const shape = Array.from({ length: rank }, i32).reverse();
    const name = file.toString('utf8', offset, offset + nameLength);
    offset += nameLength;
    if (!name.startsWith('encoder.')) break;
    const count = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(count);
    if (type === 0) {
      for (let i = 0; i < count; i++) data[i] = file.readFloatLE(offset + 4 * i);
      offset += 4 * count;
    } else if (type === 1) {
      for (let i = 0; i < count; i++) data[i] = halfTable[file.readUInt16LE(offset + 2 * i)]!;
      offset += 2 * count;
    } else {
      throw new Error(`${name}: ggml type ${type} is not f32 or f16 (a quantised model cannot be converted)`);
    }
    tensors.set(name, { shape, data });
  }
  return { heads: hyperparameters[3]!, layers: hyperparameters[4]!, tensors };
}

class EncoderGraph extends GraphBuilder {
  private counter = 0;

  constructor(private readonly encoder: GgmlEncoder) {
    super();
  }

  tensor(name: string): { shape: number[]; data: Float32Array } {
    const tensor = this.encoder.tensors.get(name);
    if (!tensor) throw new Error(`the ggml file lacks ${name}`);
    return tensor;
  }

  weight(name: string, shape?: number[]): string {
    const tensor = this.tensor(name);
    return this.constant(name, shape ?? tensor.shape, tensor.data);
  }

  op(opType: string, inputs: string[], attributes: ReturnType<typeof intAttribute>[] = [], outputs?: string[]): string[] {
    const base = `${opType.toLowerCase()}_${this.counter++}`;
    const names = outputs ?? [base];
    this.nodes.push(node(opType, inputs, names, base, attributes));
    return names;
  }

  one(opType: string, inputs: string[], attributes: ReturnType<typeof intAttribute>[] = [], output?: string): string {
    return this.op(opType, inputs, attributes, output ? [output] : undefined)[0]!;
  }

  layerNorm(input: string, prefix: string, output?: string): string {
    const attributes = [intAttribute('axis', -1), { name: 'epsilon', f: layerNormEpsilon, type: onnx.AttributeProto.AttributeType.FLOAT }];
    return this.one('LayerNormalization', [input, this.weight(`${prefix}.weight`), this.weight(`${prefix}.bias`)], attributes, output);
  }

  /** The input of the query, key and value products is quantised once. */
  private readonly quantizedInputs = new Map<string, [string, string, string]>();

  quantized(input: string, prefix: string): [string, string, string] {
    let outputs = this.quantizedInputs.get(input);
    if (!outputs) {
      outputs = this.op('DynamicQuantizeLinear', [input], [], [`${prefix}/x_q`, `${prefix}/x_scale`, `${prefix}/x_zero_point`]) as [
        string,
        string,
        string,
      ];
      this.quantizedInputs.set(input, outputs);
    }
    return outputs;
  }

  /** x [.., in] x W^T (+ b), W [out, in] as ggml stores it. */
  linear(input: string, prefix: string, precision: WhisperEncoderPrecision, bias = true): string {
    const weight = this.tensor(`${prefix}.weight`);
    const [outputs, inputs] = weight.shape as [number, number];
    let product: string;
    if (precision === 'float32' || float32LinearsInInt8.test(prefix)) {
      const transposed = new Float32Array(inputs * outputs);
      for (let o = 0; o < outputs; o++) for (let i = 0; i < inputs; i++) transposed[i * outputs + o] = weight.data[o * inputs + i]!;
      product = this.one('MatMul', [input, this.constant(`${prefix}.weight_t`, [inputs, outputs], transposed)]);
    } else {
      const { matrix, scales } = quantizePerOutputChannel(weight.data, outputs, inputs);
      this.initializers.push(
        onnx.TensorProto.create({
          name: `${prefix}.weight_int8`,
          dims: [inputs, outputs],
          dataType: TensorType.INT8,
          rawData: new Uint8Array(matrix.buffer),
        }),
      );
      const [quantized, scale, zeroPoint] = this.quantized(input, prefix);
      const integers = this.one('MatMulInteger', [quantized, `${prefix}.weight_int8`, zeroPoint]);
      const floats = this.one('Cast', [integers], [intAttribute('to', TensorType.FLOAT)]);
      const scales2 = this.one('Mul', [scale, this.constant(`${prefix}.weight_scale`, [outputs], scales)]);
      product = this.one('Mul', [floats, scales2]);
    }
    return bias ? this.one('Add', [product, this.weight(`${prefix}.bias`)]) : product;
  }
}

/** Symmetric int8 per output channel: W[o, i] ~ matrix[i, o] x scales[o], matrix in [-127, 127]. */
export function quantizePerOutputChannel(
  weight: Float32Array,
  outputs: number,
  inputs: number,
): { matrix: Int8Array; scales: Float32Array } {
  const matrix = new Int8Array(inputs * outputs);
  const scales = new Float32Array(outputs);
  for (let o = 0; o < outputs; o++) {
    let largest = 0;
    for (let i = 0; i < inputs; i++) largest = Math.max(largest, Math.abs(weight[o * inputs + i]!));
    const scale = largest > 0 ? largest / 127 : 1;
    scales[o] = scale;
    for (let i = 0; i < inputs; i++) matrix[i * outputs + o] = Math.max(-127, Math.min(127, Math.round(weight[o * inputs + i]! / scale)));
  }
  return { matrix, scales };
}

/** Serialised ONNX encoder. */
export function buildWhisperEncoderOnnx(
  encoder: GgmlEncoder,
  precision: WhisperEncoderPrecision,
  truncate?: WhisperEncoderGraphOptions,
): Uint8Array {
  const g = new EncoderGraph(encoder);
  const conv1 = g.tensor('encoder.conv1.weight');
  const [state, melBins] = conv1.shape as [number, number];
  const headSize = state / encoder.heads;

  const conv = (input: string, name: string, stride: number): string =>
    g.one(
      'Conv',
      [input, g.weight(`encoder.${name}.weight`), g.weight(`encoder.${name}.bias`, [state])],
      [intsAttribute('kernel_shape', [3]), intsAttribute('pads', [1, 1]), intsAttribute('strides', [stride])],
    );
  const gelu = (input: string): string => g.one('Gelu', [input]);
  let x = gelu(conv(gelu(conv('mel', 'conv1', 1)), 'conv2', 2));
  x = g.one('Transpose', [x], [intsAttribute('perm', [0, 2, 1])]);
  const positions = truncate?.positions ?? 'absolute';
  if (positions === 'absolute') {
    const context = g.one('Shape', [x], [intAttribute('start', 1), intAttribute('end', 2)]);
    const embedding = g.one('Slice', [g.weight('encoder.positional_embedding'), g.int64('zero', [0]), context, g.int64('axis_0', [0])]);
    x = g.one('Add', [x, embedding]);
  } else if (positions === 'mean') {
    const embedding = g.tensor('encoder.positional_embedding');
    const rows = embedding.shape[0]!;
    const meanRow = new Float32Array(state);
    for (let r = 0; r < rows; r++) for (let d = 0; d < state; d++) meanRow[d] = meanRow[d]! + embedding.data[r * state + d]! / rows;
    x = g.one('Add', [x, g.constant('positional_embedding_mean', [state], meanRow)]);
  }

  const scale = g.constant('head_scale', [], Float32Array.of(headSize ** -0.25));
  const split = g.int64('heads_shape', [1, -1, encoder.heads, headSize]);
  const merge = g.int64('state_shape', [1, -1, state]);
  const heads = (input: string, perm: number[]): string =>
    g.one('Transpose', [g.one('Reshape', [input, split])], [intsAttribute('perm', perm)]);
  const layers = truncate?.layers ?? encoder.layers;
  if (layers < 1 || layers > encoder.layers) throw new Error(`the encoder has ${encoder.layers} blocks, asked for ${layers}`);
  const blockOutputs: string[] = [];
  for (let l = 0; l < layers; l++) {
    const p = `encoder.blocks.${l}`;
    const a = g.layerNorm(x, `${p}.attn_ln`);
    const q = heads(g.one('Mul', [g.linear(a, `${p}.attn.query`, precision), scale]), [0, 2, 1, 3]);
    const k = heads(g.one('Mul', [g.linear(a, `${p}.attn.key`, precision, false), scale]), [0, 2, 3, 1]);
    const v = heads(g.linear(a, `${p}.attn.value`, precision), [0, 2, 1, 3]);
    const weights = g.one('Softmax', [g.one('MatMul', [q, k])], [intAttribute('axis', -1)]);
    const attended = g.one('Reshape', [g.one('Transpose', [g.one('MatMul', [weights, v])], [intsAttribute('perm', [0, 2, 1, 3])]), merge]);
    x = g.one('Add', [x, g.linear(attended, `${p}.attn.out`, precision)]);
    const m = g.layerNorm(x, `${p}.mlp_ln`);
    const last = truncate && l === layers - 1;
    const output = last ? 'embd' : truncate?.blockOutputs ? `block_${l + 1}` : undefined;
    x = g.one('Add', [x, g.linear(gelu(g.linear(m, `${p}.mlp.0`, precision)), `${p}.mlp.2`, precision)], [], output);
    if (truncate?.blockOutputs && !last) blockOutputs.push(x);
  }
  if (!truncate) g.layerNorm(x, 'encoder.ln_post', 'embd');

  return encodeModel({
    producer: 'whisper-encoder-to-onnx',
    irVersion,
    opsetVersion,
    graphName: `whisper_encoder_${precision}`,
    nodes: g.nodes,
    initializers: g.initializers,
    inputs: [floatValueInfo('mel', [1, melBins, 'frames'])],
    outputs: [floatValueInfo('embd', [1, 'context', state]), ...blockOutputs.map((name) => floatValueInfo(name, [1, 'context', state]))],
  });
}

/**
 * Rewrites dynamic-int8 1-D `ConvInteger` nodes into im2col + `MatMulInteger` (Kokoro int8 and similar exports).
 *
 * Why: onnxruntime's CPU ConvInteger kernel is slow (88% of Kokoro's run time on onnxruntime-node 1.30), while
 * MatMulInteger with a constant right-hand side runs on MLAS' packed integer GEMM.
 * The weights keep their type (uint8 in Kokoro) and zero point: MLAS' u8 x u8 kernel is exact on every CPU, so the
 * output is bit-identical. Centring them to int8 (the u8 x s8 kernel) was exact only with VNNI: AVX2 without it
 * (vpmaddubsw) saturates pairs of products, and Kokoro's audio then differed from the original's at 1.2 dB SNR.
 * On an AVX2 CPU (2 threads, a 7.2 s utterance) u8 x u8 cost 3-5% more CPU than u8 x s8; the original took 2x.
 *
 * Measured on Kokoro-82M v1.0 int8 (AVX-512 VNNI CPU), one thread, a 7.0 s utterance, CPU seconds:
 *   original (ConvInteger)                                                  ~6.5 (wall, 2 threads)
 *   float Conv on zero-point-centred integers (1-D or lifted to 2-D NCHWc)  4.7-4.9
 *   im2col + MatMulInteger, time-major, u8 x s8 constant                    2.8-3.4 (exact only with VNNI)
 *   channel-major (no transposes): weights as the left u8 operand           4.1-4.8 (u8 x u8 kernel)
 *   dequantising before the transpose (MatMulIntegerToFloat fusion)         no gain, and not bit-identical
 * Whole model, 2 threads, a 4.6 s utterance, CPU seconds (loaded machine): this rewrite 1.8-1.9; every int8 weight
 * dequantised to float32 with the DynamicQuantizeLinear chains removed (float Conv/MatMul, 293 MB) 3.2-3.3; only the
 * MatMulIntegers dequantised (convolutions as here) 2.0-2.1. Session options (1 vs 2 threads, spinning, memory arena,
 * 'extended' vs 'all') changed nothing beyond noise except spinning, which doubled CPU time.
 * Of the remaining time, the integer GEMMs are ~40%, the sine source ~10%, im2col data movement ~16%.
 *
 * For `y = ConvInteger(x_q [1,C,T], w_q [O,C,k], x_zp, w_zp)` with dilation d, stride s, pads (p0, p1):
 *   X = Transpose(x_q) [1,T,C]; Xp = Pad(X, time p0/p1, value x_zp)   (x_zp stands for 0.0)
 *   tap_j = Slice(Xp, time from j*d to end-(k-1-j)*d, step s)   j = 0..k-1
 *   A = Concat(tap_0..tap_k-1, axis 2) [1,T',k*C];  B[j*C+c, o] = w_q[o,c,j]
 *   y = Transpose(MatMulInteger(A, B, x_zp, w_zp)) [1,O,T']
 */
import {
  dims,
  graphOf,
  int64Tensor,
  integerValues,
  intAttribute,
  intsAttribute,
  node,
  onnx,
  TensorType,
  type ModelProto,
  type NodeProto,
  type TensorProto,
} from './onnx-graph.js';

export interface ConvIntegerRewriteReport {
  rewritten: number;
  kept: number;
}

/** Rewrites the model in place. */
export function rewriteConvInteger(model: ModelProto): ConvIntegerRewriteReport {
  const graph = graphOf(model);
  const initializers = new Map(graph.initializer.map((t) => [t.name, t]));
  const timeMajorInputs = new Map<string, string>();
  const nodes: NodeProto[] = [];
  const added: TensorProto[] = [];
  const replaced = new Set<string>();
  let rewritten = 0;
  let kept = 0;

  for (const original of graph.node) {
    const [x, w, xZeroPoint, wZeroPoint] = original.input;
    const weight = original.opType === 'ConvInteger' && w ? initializers.get(w) : undefined;
    const weightZeroPoint = wZeroPoint ? initializers.get(wZeroPoint) : undefined;
    const attributes = Object.fromEntries(original.attribute.map((a) => [a.name, a]));
    const convertible =
      x &&
      weight &&
      dims(weight).length === 3 &&
      (!wZeroPoint || weightZeroPoint) &&
      Number(attributes.group?.i ?? 1) === 1 &&
      (attributes.auto_pad?.s?.length ?? 0) <= 'NOTSET'.length;
    if (!convertible) {
      if (original.opType === 'ConvInteger') kept++;
      nodes.push(original);
      continue;
    }
    const base = original.name || `ConvInteger_${nodes.length}`;
    const kernel = Number(attributes.kernel_shape?.ints[0] ?? dims(weight)[2]);
    const dilation = Number(attributes.dilations?.ints[0] ?? 1);
    const stride = Number(attributes.strides?.ints[0] ?? 1);
    const [padStart, padEnd] = (attributes.pads?.ints ?? [0, 0]).map(Number) as [number, number];
    const [outChannels, inChannels] = dims(weight) as [number, number, number];

    let timeMajor = timeMajorInputs.get(x);
    if (!timeMajor) {
      timeMajor = `${x}/time_major`;
      nodes.push(node('Transpose', [x], [timeMajor], `${timeMajor}/Transpose`, [intsAttribute('perm', [0, 2, 1])]));
      timeMajorInputs.set(x, timeMajor);
    }
    let padded = timeMajor;
    if (padStart > 0 || padEnd > 0) {
      padded = `${base}/padded`;
      added.push(int64Tensor(`${padded}/pads`, [6], [0, padStart, 0, 0, padEnd, 0]));
      nodes.push(node('Pad', [timeMajor, `${padded}/pads`, xZeroPoint ?? ''], [padded], `${padded}/Pad`));
    }
    let columns = padded;
    if (kernel > 1 || stride > 1) {
      const taps: string[] = [];
      for (let j = 0; j < kernel; j++) {
        const tap = `${base}/tap${j}`;
        const fromEnd = (kernel - 1 - j) * dilation;
        added.push(int64Tensor(`${tap}/starts`, [1], [j * dilation]));
        added.push(int64Tensor(`${tap}/ends`, [1], [fromEnd === 0 ? Number.MAX_SAFE_INTEGER : -fromEnd]));
        added.push(int64Tensor(`${tap}/axes`, [1], [1]));
        added.push(int64Tensor(`${tap}/steps`, [1], [stride]));
        nodes.push(node('Slice', [padded, `${tap}/starts`, `${tap}/ends`, `${tap}/axes`, `${tap}/steps`], [tap], `${tap}/Slice`));
        taps.push(tap);
      }
      columns = `${base}/columns`;
      nodes.push(
        taps.length === 1
          ? node('Identity', taps, [columns], `${columns}/Identity`)
          : node('Concat', taps, [columns], `${columns}/Concat`, [intAttribute('axis', 2)]),
      );
    }
    const matrix = `${weight.name}/im2col`;
    added.push(im2colWeights(matrix, weight, kernel, inChannels, outChannels));
    replaced.add(weight.name);
    const product = `${base}/product`;
    nodes.push(node('MatMulInteger', [columns, matrix, xZeroPoint ?? '', wZeroPoint ?? ''], [product], `${product}/MatMulInteger`));
    nodes.push(node('Transpose', [product], [original.output[0]!], `${base}/channel_major`, [intsAttribute('perm', [0, 2, 1])]));
    rewritten++;
  }

  // Initializers nothing reads any more (the weights in convolution layout) are dropped.
  const read = new Set(nodes.flatMap((n) => n.input));
  graph.initializer = [...graph.initializer.filter((t) => !replaced.has(t.name) || read.has(t.name)), ...added];
  graph.node = nodes;
  return { rewritten, kept };
}

/** B[j*C + c, o] = w[o, c, j] in the weight's own type; its zero point stays beside it (a scalar, or one per output channel = column). */
function im2colWeights(name: string, weight: TensorProto, kernel: number, inChannels: number, outChannels: number): TensorProto {
  const values = integerValues(weight);
  const matrix = new Int32Array(kernel * inChannels * outChannels);
  for (let o = 0; o < outChannels; o++) {
    for (let c = 0; c < inChannels; c++) {
      for (let j = 0; j < kernel; j++) matrix[(j * inChannels + c) * outChannels + o] = values[(o * inChannels + c) * kernel + j]!;
    }
  }
  const bytes = weight.dataType === TensorType.INT8 ? new Uint8Array(Int8Array.from(matrix).buffer) : Uint8Array.from(matrix);
  return onnx.TensorProto.create({ name, dims: [kernel * inChannels, outChannels], dataType: weight.dataType, rawData: bytes });
}

/**
 * Pull-time conversion of Kokoro-82M v1.0 int8:
 * - the ConvInteger rewrite (speed);
 * - the duration of the trailing pad token capped: the model gives it up to 9 frames of 25 ms (silence after the
 *   last phoneme), which the vocoder spends as much time on as on speech and which would sit as a gap at every chunk
 *   join of a streamed sentence; sentence-final pauses belong to the punctuation tokens and stay. (The leading pad's
 *   14-17 frames cannot be cut the same way: with fewer the first phoneme loses its onset and whisper drops the first
 *   word; the engine trims that silence from the output instead.)
 * - two extra inputs that reshape the predicted pitch curve before the vocoder, so emotions move F0 with the model's
 *   own source-filter decoder instead of a post-hoc pitch shifter:
 *   f0_scale [1]: multiplies F0 (1 = unchanged; 0 = no voicing at all: the harmonic source is silent and only the
 *                 noise source remains, which is how `whisper` is rendered)
 *   f0_range [1]: expands/compresses voiced F0 around its voiced mean (1 = unchanged)
 */
import { rewriteConvInteger } from './conv-integer.js';
import { floatTensor, graphOf, int64Tensor, intAttribute, node, onnx, readModel, TensorType, writeModel, type ModelProto } from './onnx-graph.js';

/** Kokoro's SineGen treats frames below this F0 (Hz) as unvoiced. */
const voicedThresholdHz = 10;
/** Voiced frames never drop below this after range expansion, so expansion does not devoice them. */
const voicedFloorHz = 40;
const f0Tensor = '/encoder/Squeeze_output_0';
/** Predicted durations per token (frames of 25 ms, float [1, tokens], pads included), after rounding and the floor of 1. */
const durationTensor = '/encoder/Clip_output_0';
/** Frames kept for the trailing pad: enough for the last phoneme's release. */
export const trailingPadFrames = 3;

export async function convertKokoro(inputPath: string, outputPath: string): Promise<{ rewritten: number }> {
  const model = await readModel(inputPath);
  const { rewritten } = rewriteConvInteger(model);
  capTrailingPad(model, trailingPadFrames);
  addF0Control(model);
  await writeModel(model, outputPath);
  return { rewritten };
}

export function capTrailingPad(model: ModelProto, frames: number): void {
  const graph = graphOf(model);
  const producer = graph.node.findIndex((n) => n.output.includes(durationTensor));
  if (producer < 0) throw new Error(`Kokoro graph has no ${durationTensor} (the predicted durations)`);
  const p = (name: string) => `trailing_pad/${name}`;
  const capped = p('output');
  for (const n of graph.node) n.input = n.input.map((input) => (input === durationTensor ? capped : input));
  graph.initializer.push(
    floatTensor(p('cap'), [], new Float32Array([frames])),
    int64Tensor(p('zero'), [1], [0]),
    int64Tensor(p('one'), [1], [1]),
    int64Tensor(p('minus_one'), [1], [-1]),
    int64Tensor(p('end'), [1], [Number.MAX_SAFE_INTEGER]),
  );
  const edit = [
    node('Slice', [durationTensor, p('zero'), p('minus_one'), p('one')], [p('tokens')], p('SliceTokens')),
    node('Slice', [durationTensor, p('minus_one'), p('end'), p('one')], [p('pad')], p('SlicePad')),
    node('Min', [p('pad'), p('cap')], [p('pad_capped')], p('Min')),
    node('Concat', [p('tokens'), p('pad_capped')], [capped], p('Concat'), [intAttribute('axis', 1)]),
  ];
  graph.node.splice(producer + 1, 0, ...edit);
}

function addF0Control(model: ModelProto): void {
  const graph = graphOf(model);
  const producer = graph.node.findIndex((n) => n.output.includes(f0Tensor));
  if (producer < 0) throw new Error(`Kokoro graph has no ${f0Tensor} (the predicted F0 curve)`);
  const p = (name: string) => `f0_control/${name}`;
  const shaped = p('output');
  for (const n of graph.node) n.input = n.input.map((input) => (input === f0Tensor ? shaped : input));
  graph.input.push(
    onnx.ValueInfoProto.create({ name: 'f0_scale', type: { tensorType: { elemType: TensorType.FLOAT, shape: { dim: [{ dimValue: 1 }] } } } }),
    onnx.ValueInfoProto.create({ name: 'f0_range', type: { tensorType: { elemType: TensorType.FLOAT, shape: { dim: [{ dimValue: 1 }] } } } }),
  );
  graph.initializer.push(
    floatTensor(p('threshold'), [], new Float32Array([voicedThresholdHz])),
    floatTensor(p('floor'), [], new Float32Array([voicedFloorHz])),
    floatTensor(p('epsilon'), [], new Float32Array([1e-6])),
    int64Tensor(p('time_axis'), [1], [-1]),
  );
  const edit = [
    node('Greater', [f0Tensor, p('threshold')], [p('voiced')], p('Greater')),
    node('Cast', [p('voiced')], [p('voiced_float')], p('Cast'), [{ name: 'to', i: TensorType.FLOAT, type: onnx.AttributeProto.AttributeType.INT }]),
    node('Mul', [f0Tensor, p('voiced_float')], [p('voiced_f0')], p('MulVoiced')),
    node('ReduceSum', [p('voiced_f0'), p('time_axis')], [p('voiced_sum')], p('SumF0')),
    node('ReduceSum', [p('voiced_float'), p('time_axis')], [p('voiced_count')], p('SumCount')),
    node('Add', [p('voiced_count'), p('epsilon')], [p('voiced_count_safe')], p('AddEpsilon')),
    node('Div', [p('voiced_sum'), p('voiced_count_safe')], [p('voiced_mean')], p('Mean')),
    node('Sub', [f0Tensor, p('voiced_mean')], [p('deviation')], p('Deviation')),
    node('Mul', [p('deviation'), 'f0_range'], [p('scaled_deviation')], p('Range')),
    node('Add', [p('voiced_mean'), p('scaled_deviation')], [p('ranged')], p('Recentre')),
    node('Max', [p('ranged'), p('floor')], [p('ranged_floored')], p('Floor')),
    node('Where', [p('voiced'), p('ranged_floored'), f0Tensor], [p('shaped')], p('Where')),
    node('Mul', [p('shaped'), 'f0_scale'], [shaped], p('Scale')),
  ];
  graph.node.splice(producer + 1, 0, ...edit);
}

/**
 * Pull-time conversion of Kokoro-82M v1.0 int8:
 * - the ConvInteger rewrite (speed);
 * - the duration of the trailing pad token capped: the model gives it up to 9 frames of 25 ms (silence after the
 *   last phoneme), which the vocoder spends as much time on as on speech and which would sit as a gap at every chunk
 *   join of a streamed sentence; sentence-final pauses belong to the punctuation tokens and stay. (The leading pad's
 *   14-17 frames cannot be cut the same way: with fewer the first phoneme loses its onset and whisper drops the first
 *   word.)
 * - the leading pad shortened for the decoder only: durations, F0 and energy are still predicted with the whole pad,
 *   then the decoder (most of a run's time) gets the aligned features from a few frames before the first phoneme.
 *   The engine trims the silence left at the start anyway; this saves 10-15% of a short run's CPU time (first audio).
 * - two extra inputs that reshape the predicted pitch curve before the vocoder, so emotions move F0 with the model's
 *   own source-filter decoder instead of a post-hoc pitch shifter:
 *   f0_scale [1]: multiplies F0 (1 = unchanged; 0 = no voicing at all: the harmonic source is silent and only the
 *                 noise source remains, which is how `whisper` is rendered)
 *   f0_range [1]: expands/compresses voiced F0 around its voiced mean (1 = unchanged)
 * - the predicted durations as a second output, `durations` (float [1, tokens], frames of 25 ms per token, pads
 *   included, the trailing pad capped): what speech with word timestamps reads its word times from.
 */
import { rewriteConvInteger } from './conv-integer.js';
import {
  floatTensor,
  floatValueInfo,
  graphOf,
  int64Tensor,
  intAttribute,
  node,
  onnx,
  readModel,
  TensorType,
  writeModel,
  type ModelProto,
} from './onnx-graph.js';

/** Kokoro's SineGen treats frames below this F0 (Hz) as unvoiced. */
const voicedThresholdHz = 10;
/** Voiced frames never drop below this after range expansion, so expansion does not devoice them. */
const voicedFloorHz = 40;
const f0Tensor = '/encoder/Squeeze_output_0';
/** Predicted durations per token (frames of 25 ms, float [1, tokens], pads included), after rounding and the floor of 1. */
const durationTensor = '/encoder/Clip_output_0';
/** The graph output of the durations (see exposeDurations). */
export const durationsOutput = 'durations';
/** Samples of 24 kHz audio per duration frame. */
export const kokoroSamplesPerFrame = 600;
/** Frames kept for the trailing pad: enough for the last phoneme's release. */
export const trailingPadFrames = 3;
/**
 * The decoder's inputs, aligned to frames on their last axis (features per frame: 1 for the text features, 2 for the F0
 * and energy curves, which run at twice the frame rate).
 */
const decoderInputs: Array<{ tensor: string; perFrame: number }> = [
  { tensor: '/encoder/MatMul_1_output_0', perFrame: 1 },
  { tensor: '/encoder/Reshape_output_0', perFrame: 2 },
  { tensor: '/encoder/Reshape_1_output_0', perFrame: 2 },
];
/**
 * Leading-pad frames the decoder keeps: the first phoneme is shaped by the frames before it. With 4, the first French
 * word of the round-trip sentences was misheard; with 8, am_puck's first words were ("Book a table" heard as "Look a
 * table", "He began" as "You began"); with 16 whisper hears the same as from the whole pad.
 */
export const decoderLeadingPadFrames = 16;

export async function convertKokoro(inputPath: string, outputPath: string): Promise<{ rewritten: number }> {
  const model = await readModel(inputPath);
  const { rewritten } = rewriteConvInteger(model);
  capTrailingPad(model, trailingPadFrames);
  addF0Control(model);
  trimDecoderLeadingPad(model, decoderLeadingPadFrames);
  exposeDurations(model);
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

/** The durations the decoder is given (after the trailing pad's cap) as the graph output `durations`. */
export function exposeDurations(model: ModelProto): void {
  const graph = graphOf(model);
  if (graph.output.some((output) => output.name === durationsOutput)) return;
  graph.node.push(node('Identity', ['trailing_pad/output'], [durationsOutput], 'durations/Identity'));
  graph.output.push(floatValueInfo(durationsOutput, [1, 'tokens']));
}

/** Drops all but `frames` frames of the leading pad from the decoder's inputs. */
export function trimDecoderLeadingPad(model: ModelProto, frames: number): void {
  const graph = graphOf(model);
  const p = (name: string) => `leading_pad/${name}`;
  const durations = graph.node.findIndex((n) => n.output.includes(durationTensor));
  if (durations < 0) throw new Error(`Kokoro graph has no ${durationTensor} (the predicted durations)`);
  graph.initializer.push(
    floatTensor(p('keep'), [], new Float32Array([frames])),
    floatTensor(p('none'), [], new Float32Array([0])),
    int64Tensor(p('zero'), [1], [0]),
    int64Tensor(p('one'), [1], [1]),
    int64Tensor(p('last_axis'), [1], [-1]),
    int64Tensor(p('end'), [1], [Number.MAX_SAFE_INTEGER]),
  );
  for (const { perFrame } of decoderInputs) graph.initializer.push(int64Tensor(p(`per_frame_${perFrame}`), [1], [perFrame]));
  // Frames to drop: max(leading pad duration - frames, 0), as int64 [1].
  graph.node.splice(
    durations + 1,
    0,
    node('Slice', [durationTensor, p('zero'), p('one'), p('one')], [p('pad')], p('SlicePad')),
    node('Sub', [p('pad'), p('keep')], [p('excess')], p('Excess')),
    node('Max', [p('excess'), p('none')], [p('drop_float')], p('Drop')),
    node('Cast', [p('drop_float')], [p('drop_2d')], p('Cast'), [
      { name: 'to', i: TensorType.INT64, type: onnx.AttributeProto.AttributeType.INT },
    ]),
    node('Reshape', [p('drop_2d'), p('one')], [p('drop')], p('Reshape')),
  );
  for (const { tensor, perFrame } of decoderInputs) {
    const producer = graph.node.findIndex((n) => n.output.includes(tensor));
    if (producer < 0) throw new Error(`Kokoro graph has no ${tensor} (a decoder input)`);
    const trimmed = p(tensor);
    for (const n of graph.node) n.input = n.input.map((input) => (input === tensor ? trimmed : input));
    graph.node.splice(
      producer + 1,
      0,
      node('Mul', [p('drop'), p(`per_frame_${perFrame}`)], [p(`${tensor}/start`)], p(`${tensor}/Start`)),
      node('Slice', [tensor, p(`${tensor}/start`), p('end'), p('last_axis')], [trimmed], p(`${tensor}/Slice`)),
    );
  }
}

function addF0Control(model: ModelProto): void {
  const graph = graphOf(model);
  const producer = graph.node.findIndex((n) => n.output.includes(f0Tensor));
  if (producer < 0) throw new Error(`Kokoro graph has no ${f0Tensor} (the predicted F0 curve)`);
  const p = (name: string) => `f0_control/${name}`;
  const shaped = p('output');
  for (const n of graph.node) n.input = n.input.map((input) => (input === f0Tensor ? shaped : input));
  graph.input.push(
    onnx.ValueInfoProto.create({
      name: 'f0_scale',
      type: { tensorType: { elemType: TensorType.FLOAT, shape: { dim: [{ dimValue: 1 }] } } },
    }),
    onnx.ValueInfoProto.create({
      name: 'f0_range',
      type: { tensorType: { elemType: TensorType.FLOAT, shape: { dim: [{ dimValue: 1 }] } } },
    }),
  );
  graph.initializer.push(
    floatTensor(p('threshold'), [], new Float32Array([voicedThresholdHz])),
    floatTensor(p('floor'), [], new Float32Array([voicedFloorHz])),
    floatTensor(p('epsilon'), [], new Float32Array([1e-6])),
    int64Tensor(p('time_axis'), [1], [-1]),
  );
  const edit = [
    node('Greater', [f0Tensor, p('threshold')], [p('voiced')], p('Greater')),
    node('Cast', [p('voiced')], [p('voiced_float')], p('Cast'), [
      { name: 'to', i: TensorType.FLOAT, type: onnx.AttributeProto.AttributeType.INT },
    ]),
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

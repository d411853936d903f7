/**
 * Pull-time conversion of Kokoro-82M v1.0 int8: the ConvInteger rewrite (speed) and two extra inputs that reshape the
 * predicted pitch curve before the vocoder, so emotions move F0 with the model's own source-filter decoder instead of
 * a post-hoc pitch shifter:
 *   f0_scale [1]: multiplies F0 (1 = unchanged; 0 = no voicing at all: the harmonic source is silent and only the
 *                 noise source remains, which is how `whisper` is rendered)
 *   f0_range [1]: expands/compresses voiced F0 around its voiced mean (1 = unchanged)
 */
import { rewriteConvInteger } from './conv-integer.js';
import { floatTensor, graphOf, int64Tensor, node, onnx, readModel, TensorType, writeModel, type ModelProto } from './onnx-graph.js';

/** Kokoro's SineGen treats frames below this F0 (Hz) as unvoiced. */
const voicedThresholdHz = 10;
/** Voiced frames never drop below this after range expansion, so expansion does not devoice them. */
const voicedFloorHz = 40;
const f0Tensor = '/encoder/Squeeze_output_0';

export async function convertKokoro(inputPath: string, outputPath: string): Promise<{ rewritten: number }> {
  const model = await readModel(inputPath);
  const { rewritten } = rewriteConvInteger(model);
  addF0Control(model);
  await writeModel(model, outputPath);
  return { rewritten };
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

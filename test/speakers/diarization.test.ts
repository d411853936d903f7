import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { diarizationErrorRate, parseRttm, parseUem } from '../../bench/lib/der.js';
import { decodeFile } from '../../src/audio/decode.js';
import { SileroVad, speechSegments } from '../../src/audio/vad.js';
import { diarize } from '../../src/speakers/diarization.js';
import { SpeakerEncoder } from '../../src/speakers/embedding.js';
import { diarizationEntries, evalDir, sharedModelsDir, type DiarizationEntry } from '../helpers/app.js';
import { ge2eModelPath } from '../helpers/models.js';

const files = diarizationEntries();

describe('diarization with GE2E windows and agglomerative clustering', () => {
  let encoder: SpeakerEncoder;
  let vad: SileroVad;
  before(async () => {
    encoder = await SpeakerEncoder.load(await ge2eModelPath(), { threads: 2 });
    vad = await SileroVad.load(path.join(sharedModelsDir, 'silero-vad', 'silero_vad.onnx'));
  });
  after(async () => {
    await encoder.close();
    await vad.close();
  });

  async function run(entry: DiarizationEntry, numSpeakers?: number) {
    const waveform = await decodeFile(path.join(evalDir, entry.audio), { sampleRate: 16000, channels: 1 });
    const regions = speechSegments(await vad.probabilities(waveform.samples), waveform.samples.length / 16000);
    const result = await diarize(encoder, waveform, regions, numSpeakers === undefined ? {} : { numSpeakers });
    const reference = parseRttm(readFileSync(path.join(evalDir, entry.rttm), 'utf8'));
    const uem = entry.uem ? parseUem(readFileSync(path.join(evalDir, entry.uem), 'utf8')) : undefined;
    const hypothesis = result.turns.map((t) => ({ ...t, speaker: `S${t.speaker}` }));
    return { result, score: diarizationErrorRate(reference, hypothesis, { collarSeconds: 0.25, uem, durationSeconds: waveform.samples.length / 16000 }) };
  }

  test('the two-speaker file: 2 speakers found without being told, low DER', async (t) => {
    const { result, score } = await run(files.find((f) => f.id === 'pyannote/sample')!);
    t.diagnostic(`speakers ${result.speakerCount}, turns ${result.turns.length}, DER ${(100 * score.der).toFixed(1)}% (miss ${score.missSeconds.toFixed(2)} s, false alarm ${score.falseAlarmSeconds.toFixed(2)} s, confusion ${score.confusionSeconds.toFixed(2)} s of ${score.referenceSeconds.toFixed(2)} s)`);
    assert.equal(result.speakerCount, 2);
    assert.ok(score.der < 0.1, `DER ${score.der}`);
    for (const [i, turn] of result.turns.entries()) {
      assert.ok(turn.endSeconds > turn.startSeconds);
      if (i > 0) assert.ok(turn.startSeconds >= result.turns[i - 1]!.endSeconds - 1e-9, 'turns do not overlap');
    }
  });

  test('three speakers taking turns: 3 found, near-zero DER', async (t) => {
    const { result, score } = await run(files.find((f) => f.id === 'pv_falcon/test')!);
    t.diagnostic(`speakers ${result.speakerCount}, DER ${(100 * score.der).toFixed(1)}%`);
    assert.equal(result.speakerCount, 3);
    assert.ok(score.der < 0.05, `DER ${score.der}`);
  });

  test('DER on every eval/diar file (reported; informative)', async (t) => {
    for (const entry of files) {
      const free = await run(entry);
      const told = await run(entry, entry.num_speakers);
      t.diagnostic(
        `${entry.id}: ${entry.num_speakers} speakers; found ${free.result.speakerCount}, DER ${(100 * free.score.der).toFixed(1)}%; told the count, DER ${(100 * told.score.der).toFixed(1)}%`,
      );
      assert.ok(told.score.der >= 0 && told.score.der <= 2);
    }
  });
});

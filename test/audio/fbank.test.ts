import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { decodeFile } from '../../src/audio/decode.js';
import { fbank, fbankFrameCount, subtractBinMeans } from '../../src/audio/fbank.js';
import { evalDir } from '../helpers/app.js';

interface Reference {
  audio: string;
  startSeconds: number;
  durationSeconds: number;
  fbankFrames: number[];
  fbank: number[][];
}
const reference = JSON.parse(
  readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'campplus-reference.json'), 'utf8'),
) as Reference;

/** Natural-log energies; Kaldi's own implementation differs from ours by float32 rounding only (7e-5 measured). */
const toleranceLogEnergy = 5e-4;

test('Kaldi frame count: 25 ms frames every 10 ms, edge frames dropped', () => {
  assert.equal(fbankFrameCount(399), 0);
  assert.equal(fbankFrameCount(400), 1);
  assert.equal(fbankFrameCount(48000), 298);
});

test(`fbank of real speech matches kaldi-native-fbank within ${toleranceLogEnergy}`, async () => {
  const waveform = await decodeFile(path.join(evalDir, reference.audio), { sampleRate: 16000, channels: 1 });
  const start = Math.round(reference.startSeconds * 16000);
  const features = fbank(waveform.samples.subarray(start, start + Math.round(reference.durationSeconds * 16000)));
  assert.equal(features.melBins, 80);
  assert.equal(features.frames, 298);
  let maxDifference = 0;
  reference.fbankFrames.forEach((frame, i) => {
    for (let m = 0; m < 80; m++)
      maxDifference = Math.max(maxDifference, Math.abs(features.data[frame * 80 + m]! - reference.fbank[i]![m]!));
  });
  assert.ok(maxDifference < toleranceLogEnergy, `max difference ${maxDifference}`);
});

test('silence is floored at float32 epsilon, and mean subtraction zeroes each bin mean', () => {
  const features = fbank(new Float32Array(1600));
  assert.ok(features.data.every((v) => Math.abs(v - Math.log(1.1920928955078125e-7)) < 1e-5));
  const speechLike = fbank(Float32Array.from({ length: 8000 }, (_, i) => Math.sin(i * 0.3) * 0.1 + Math.sin(i * 0.05) * 0.2));
  subtractBinMeans(speechLike);
  for (let m = 0; m < 80; m++) {
    let sum = 0;
    for (let t = 0; t < speechLike.frames; t++) sum += speechLike.data[t * 80 + m]!;
    assert.ok(Math.abs(sum / speechLike.frames) < 1e-4);
  }
});

import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { decodeFile } from '../../src/audio/decode.js';
import { normalizeVolume } from '../../src/audio/loudness.js';
import { energyVoiceFlags, keptWindows, resemblyzerTrim, trimEdgeSilence, trimLongSilences } from '../../src/audio/silence.js';
import { rmsDb } from '../../src/audio/waveform.js';
import { evalDir } from '../helpers/app.js';

describe('volume normalisation', () => {
  test('raises quiet audio to the target RMS and leaves loud audio alone when increase-only', () => {
    const quiet = Float32Array.from({ length: 16000 }, (_, i) => 0.001 * Math.sin(i / 5));
    assert.ok(Math.abs(rmsDb(normalizeVolume(quiet, -30, { increaseOnly: true })) + 30) < 1e-3);
    const loud = Float32Array.from({ length: 16000 }, (_, i) => 0.5 * Math.sin(i / 5));
    assert.equal(normalizeVolume(loud, -30, { increaseOnly: true }), loud);
    assert.ok(Math.abs(rmsDb(normalizeVolume(loud, -30)) + 30) < 1e-3);
  });
});

describe('long-silence trimming', () => {
  test('majority smoothing over 8 windows, then dilation by 3 windows each side', () => {
    const flags = Uint8Array.from([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0]);
    const kept = keptWindows(flags, resemblyzerTrim);
    // Windows 6-11 voiced: 6-10 have a majority (5+ of 8), dilation widens that to 3-13; the lone window 25 disappears.
    assert.deepEqual(Array.from(kept), [0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  });

  test('a 3 s pause inserted into real speech is cut back to a short gap', async () => {
    const speech = await decodeFile(path.join(evalDir, 'vc/resemblyzer_librispeech/1998-15444-0001.wav'), {
      sampleRate: 16000,
      channels: 1,
    });
    const half = Math.floor(speech.samples.length / 2);
    const withPause = new Float32Array(speech.samples.length + 48000);
    withPause.set(speech.samples.subarray(0, half));
    for (let i = 0; i < 48000; i++) withPause[half + i] = 1e-4 * Math.sin(i);
    withPause.set(speech.samples.subarray(half), half + 48000);
    const loud = normalizeVolume(withPause, -30, { increaseOnly: true });
    const trimmedOriginal = await trimLongSilences(normalizeVolume(speech.samples, -30, { increaseOnly: true }), 16000, energyVoiceFlags);
    const trimmed = await trimLongSilences(loud, 16000, energyVoiceFlags);
    const removedSeconds = (loud.length - trimmed.length) / 16000;
    assert.ok(removedSeconds > 2.5, `removed only ${removedSeconds.toFixed(2)} s`);
    // Speech itself is kept: at most the pause plus what trimming removes from the original anyway differs.
    assert.ok(Math.abs(trimmed.length - trimmedOriginal.length) / 16000 < 0.5);
  });
});

describe('edge-silence trimming', () => {
  test('keeps the requested silence around the sound and the sound itself untouched', () => {
    const rate = 24000;
    // 0.5 s silence, 1 s tone, 0.8 s silence.
    const samples = new Float32Array(Math.round(2.3 * rate));
    for (let i = 0; i < rate; i++) samples[rate / 2 + i] = 0.3 * Math.sin((2 * Math.PI * 220 * i) / rate);
    const trimmed = trimEdgeSilence(samples, rate, { leadingSeconds: 0.04, trailingSeconds: 0.1 });
    assert.ok(Math.abs(trimmed.length / rate - 1.14) < 0.025, `${trimmed.length / rate} s`);
    assert.ok(
      Math.abs(
        rmsDb(trimmed.subarray(Math.round(0.06 * rate), Math.round(1 * rate))) -
          rmsDb(samples.subarray(Math.round(0.52 * rate), Math.round(1.46 * rate))),
      ) < 0.01,
    );
    assert.equal(
      trimEdgeSilence(samples, rate, { leadingSeconds: 0.04, trailingSeconds: Infinity }).length,
      samples.length - Math.round(0.46 * rate),
    );
    const silent = new Float32Array(rate);
    assert.equal(trimEdgeSilence(silent, rate, { leadingSeconds: 0, trailingSeconds: 0 }), silent);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { peak, rmsDb } from '../../../src/audio/waveform.js';
import { LevelMeter } from '../../../src/operations/separate/stem-files.js';

describe('LevelMeter', () => {
  it('measures a stream fed in uneven blocks like the whole signal at once', () => {
    const sampleRate = 8000;
    // Stereo: 1 s of a -6 dBFS tone, 1 s of silence, 0.5 s of a quiet -60 dBFS tone.
    const frames = sampleRate * 2.5;
    const samples = new Float32Array(frames * 2);
    for (let i = 0; i < frames; i++) {
      const amplitude = i < sampleRate ? 0.5 : i < 2 * sampleRate ? 0 : 0.001;
      samples[2 * i] = samples[2 * i + 1] = amplitude * Math.sin((2 * Math.PI * 440 * i) / sampleRate);
    }
    const meter = new LevelMeter({ sampleRate, channels: 2 });
    for (let at = 0, k = 0; at < samples.length; k++) {
      const size = [1, 999, 4096][k % 3]!;
      meter.add(samples.subarray(at, at + size));
      at += size;
    }
    const levels = meter.levels();
    assert.ok(Math.abs(levels.rmsDb - rmsDb(samples)) < 1e-6);
    assert.ok(Math.abs(levels.peakDb - 20 * Math.log10(peak(samples))) < 1e-6);
    // 20 of the 50 frames of 50 ms hold the loud tone; the -63 dBFS rms tone is below the -50 dBFS activity threshold.
    assert.equal(levels.activeFraction, 0.4);
    const halved = meter.levels(0.5);
    assert.ok(Math.abs(halved.peakDb - (levels.peakDb - 20 * Math.log10(2))) < 1e-9);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { relativeErrorDb, siSdr } from '../../bench/lib/sisdr.js';
import { RealFft } from '../../src/audio/fft.js';
import { hannWindow, istft, stft, vorbisWindow } from '../../src/audio/stft.js';
import { erbBandWidths } from '../../src/operations/separate/engines/deepfilternet3.js';

/** Deterministic noise (LCG) so failures reproduce. */
function noise(length: number, seed = 1): Float32Array {
  let state = seed;
  return Float32Array.from({ length }, () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32 - 0.5;
  });
}

describe('spectral', () => {
  for (const size of [512, 960]) {
    it(`RealFft(${size}) matches a direct DFT and inverts`, () => {
      const x = noise(size);
      const fft = new RealFft(size);
      const re = new Float64Array(size / 2 + 1);
      const im = new Float64Array(size / 2 + 1);
      fft.forward(x, re, im);
      for (const k of [0, 1, 37, size / 2]) {
        let r = 0;
        let i = 0;
        for (let n = 0; n < size; n++) {
          r += x[n]! * Math.cos((2 * Math.PI * k * n) / size);
          i -= x[n]! * Math.sin((2 * Math.PI * k * n) / size);
        }
        assert.ok(Math.abs(r - re[k]!) < 1e-9 && Math.abs(i - im[k]!) < 1e-9, `bin ${k}`);
      }
      const back = new Float64Array(size);
      fft.inverse(re, im, back);
      for (let n = 0; n < size; n++) assert.ok(Math.abs(back[n]! - x[n]!) < 1e-9);
    });
  }

  it('stft/istft reconstruct the signal (Hann 75% and Vorbis 50% overlap)', () => {
    const x = noise(20000, 7);
    for (const [size, hop, window] of [
      [1024, 256, hannWindow(1024)],
      [960, 480, vorbisWindow(960)],
    ] as const) {
      const options = { fftSize: size, hopSize: hop, window, padMode: 'constant' } as const;
      const y = istft(stft(x, options), { ...options, length: x.length });
      assert.equal(y.length, x.length);
      assert.ok(
        relativeErrorDb(
          y.map((v, i) => v - x[i]!),
          x,
        ) < -100,
      );
    }
  });

  it('DeepFilterNet ERB bands match libDF for 48 kHz / 960 / 32 bands', () => {
    assert.deepEqual(
      erbBandWidths(48000, 960, 32, 2),
      [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 5, 5, 7, 7, 8, 10, 12, 13, 15, 18, 20, 24, 28, 31, 37, 42, 50, 56, 67],
    );
  });
});

describe('siSdr', () => {
  it('is scale invariant and equals the SNR of added orthogonal-ish noise', () => {
    const reference = noise(48000, 11);
    assert.ok(
      siSdr(
        reference.map((v) => 3 * v),
        reference,
      ) > 100,
    );
    const disturbance = noise(48000, 12).map((v) => v * 0.1);
    const expected = 10 * Math.log10(reference.reduce((a, v) => a + v * v, 0) / disturbance.reduce((a, v) => a + v * v, 0));
    assert.ok(
      Math.abs(
        siSdr(
          reference.map((v, i) => v + disturbance[i]!),
          reference,
        ) - expected,
      ) < 0.2,
    );
    assert.ok(Number.isNaN(siSdr(reference, new Float32Array(48000))));
  });
});

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Fft, RealFft } from '../../src/audio/fft.js';

function noise(length: number, seed: number): Float64Array {
  let state = seed;
  return Float64Array.from({ length }, () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32 - 0.5;
  });
}

describe('RealFft', () => {
  // Odd sizes take the complex path; even ones the half-size complex transform (power of two or Bluestein).
  for (const size of [2, 7, 10, 400, 1000]) {
    test(`size ${size} equals the complex FFT of the same frame and inverts`, () => {
      const x = noise(size, size);
      const fft = new RealFft(size);
      assert.equal(fft.bins, Math.floor(size / 2) + 1);
      const re = new Float64Array(fft.bins);
      const im = new Float64Array(fft.bins);
      fft.forward(x, re, im);
      const fullRe = Float64Array.from(x);
      const fullIm = new Float64Array(size);
      new Fft(size).forward(fullRe, fullIm);
      for (let k = 0; k < fft.bins; k++) {
        assert.ok(Math.abs(re[k]! - fullRe[k]!) < 1e-12 * size && Math.abs(im[k]! - fullIm[k]!) < 1e-12 * size, `bin ${k}`);
      }
      const back = new Float64Array(size);
      fft.inverse(re, im, back);
      for (let n = 0; n < size; n++) assert.ok(Math.abs(back[n]! - x[n]!) < 1e-12, `sample ${n}`);
    });
  }

  test('rejects sizes below 2', () => {
    assert.throws(() => new RealFft(1), RangeError);
    assert.throws(() => new Fft(1.5), RangeError);
  });
});

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hzToMel, melFilterbank, melSpectrogram, melToHz } from '../../src/audio/mel.js';
import { Fft, hannWindow, istft, stft, stftFrameCount } from '../../src/audio/stft.js';

function noise(length: number, seed: number): Float32Array {
  const out = new Float32Array(length);
  let state = seed;
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    out[i] = state / 2 ** 30 - 1;
  }
  return out;
}

describe('FFT and STFT', () => {
  for (const size of [7, 400, 512, 1000]) {
    test(`FFT of size ${size} equals the direct DFT`, () => {
      const x = noise(2 * size, size);
      const re = Float64Array.from(x.subarray(0, size));
      const im = Float64Array.from(x.subarray(size));
      const fft = new Fft(size);
      const outRe = Float64Array.from(re);
      const outIm = Float64Array.from(im);
      fft.forward(outRe, outIm);
      let maxError = 0;
      for (let k = 0; k < size; k++) {
        let sumRe = 0;
        let sumIm = 0;
        for (let n = 0; n < size; n++) {
          const angle = (-2 * Math.PI * ((k * n) % size)) / size;
          sumRe += re[n]! * Math.cos(angle) - im[n]! * Math.sin(angle);
          sumIm += re[n]! * Math.sin(angle) + im[n]! * Math.cos(angle);
        }
        maxError = Math.max(maxError, Math.abs(sumRe - outRe[k]!), Math.abs(sumIm - outIm[k]!));
      }
      assert.ok(maxError < 1e-9 * size, `max error ${maxError}`);
      fft.inverse(outRe, outIm);
      for (let n = 0; n < size; n++) assert.ok(Math.abs(outRe[n]! - re[n]!) < 1e-10 && Math.abs(outIm[n]! - im[n]!) < 1e-10);
    });
  }

  test('centred frames: 1 + floor(samples / hop), and reflect padding mirrors the edges', () => {
    assert.equal(stftFrameCount(16000, { fftSize: 400, hopSize: 160 }), 101);
    assert.equal(stftFrameCount(399, { fftSize: 400, hopSize: 160, center: false }), 0);
    // A constant signal with reflect padding has the same first frame as an inner one; zero padding does not.
    const constant = new Float32Array(4000).fill(0.5);
    const reflect = stft(constant, { fftSize: 400, hopSize: 160 });
    const zeros = stft(constant, { fftSize: 400, hopSize: 160, padMode: 'constant' });
    assert.ok(Math.abs(reflect.re[0]! - reflect.re[5 * reflect.bins]!) < 1e-3);
    assert.ok(zeros.re[0]! < 0.75 * reflect.re[0]!);
  });

  for (const [fftSize, hopSize] of [
    [400, 160],
    [1024, 256],
  ] as const) {
    test(`istft(stft(x)) = x for n_fft ${fftSize}, hop ${hopSize}`, () => {
      const x = noise(12345, fftSize);
      const options = { fftSize, hopSize, window: hannWindow(fftSize) };
      const y = istft(stft(x, options), { ...options, length: x.length });
      assert.equal(y.length, x.length);
      let maxError = 0;
      for (let i = 0; i < x.length; i++) maxError = Math.max(maxError, Math.abs(x[i]! - y[i]!));
      assert.ok(maxError < 1e-5, `max error ${maxError}`);
    });
  }
});

describe('mel spectrogram', () => {
  test('Slaney mel scale: linear to 1 kHz, logarithmic above, invertible', () => {
    assert.ok(Math.abs(hzToMel(1000) - 15) < 1e-12);
    assert.ok(Math.abs(hzToMel(500) - 7.5) < 1e-12);
    for (const hz of [0, 200, 999, 1000, 4000, 8000]) assert.ok(Math.abs(melToHz(hzToMel(hz)) - hz) < 1e-9);
    for (const hz of [0, 1000, 8000]) assert.ok(Math.abs(melToHz(hzToMel(hz, 'htk'), 'htk') - hz) < 1e-9);
  });

  test('area-normalised triangles tile the spectrum', () => {
    const bins = 201;
    const filters = melFilterbank({ sampleRate: 16000, fftSize: 400, melBands: 40 });
    assert.equal(filters.length, 40 * bins);
    for (let m = 0; m < 40; m++) {
      const row = filters.subarray(m * bins, (m + 1) * bins);
      assert.ok(row.every((w) => w >= 0));
      assert.ok(Math.max(...row) > 0, `band ${m} is empty`);
    }
    // Without normalisation neighbouring triangles sum to 1 between the first (74 Hz) and last (7416 Hz) centres.
    const plain = melFilterbank({ sampleRate: 16000, fftSize: 400, melBands: 40, norm: 'none' });
    for (let k = 2; k <= 185; k++) {
      let sum = 0;
      for (let m = 0; m < 40; m++) sum += plain[m * bins + k]!;
      assert.ok(Math.abs(sum - 1) < 1e-9, `bin ${k}: ${sum}`);
    }
  });

  test('a 1 kHz tone peaks in the band centred nearest 1 kHz', () => {
    const sampleRate = 16000;
    const tone = Float32Array.from({ length: sampleRate }, (_, i) => Math.sin((2 * Math.PI * 1000 * i) / sampleRate));
    const mel = melSpectrogram(tone, { sampleRate, fftSize: 400, hopSize: 160, melBands: 40 });
    assert.equal(mel.frames, 101);
    const frame = mel.data.subarray(50 * 40, 51 * 40);
    const peak = frame.indexOf(Math.max(...frame));
    const maxMel = hzToMel(8000);
    const centres = Array.from({ length: 40 }, (_, m) => melToHz((maxMel * (m + 1)) / 41));
    const nearest = centres.reduce((best, hz, m) => (Math.abs(hz - 1000) < Math.abs(centres[best]! - 1000) ? m : best), 0);
    assert.equal(peak, nearest);
  });
});

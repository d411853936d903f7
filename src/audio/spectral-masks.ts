/**
 * Spectral statistics and masking for separation, on top of ./stft.ts: magnitudes, long-window per-bin percentiles,
 * and restoring a band lost by running a model at a lower rate.
 */
import { istft, stft, type Spectrogram, type StftOptions } from './stft.js';

export function magnitude(spec: Pick<Spectrogram, 're' | 'im'>): Float32Array {
  const mag = new Float32Array(spec.re.length);
  for (let i = 0; i < mag.length; i++) mag[i] = Math.hypot(spec.re[i]!, spec.im[i]!);
  return mag;
}

/**
 * Long-window percentile along time per bin (a stationary floor, as in minimum statistics): magnitudes are first
 * averaged over blocks of `blockFrames`, the percentile is taken over the blocks within `windowFrames`, and the
 * result is interpolated back to every frame.
 */
export function runningPercentile(
  values: Float32Array,
  frames: number,
  bins: number,
  windowFrames: number,
  percentile: number,
  blockFrames: number,
): Float32Array {
  const blocks = Math.ceil(frames / blockFrames);
  const halfBlocks = Math.max(1, Math.round(windowFrames / blockFrames / 2));
  const out = new Float32Array(values.length);
  const means = new Float32Array(blocks);
  const anchor = new Float32Array(blocks);
  const scratch = new Float32Array(2 * halfBlocks + 1);
  for (let b = 0; b < bins; b++) {
    for (let k = 0; k < blocks; k++) {
      const end = Math.min(frames, (k + 1) * blockFrames);
      let sum = 0;
      for (let t = k * blockFrames; t < end; t++) sum += values[t * bins + b]!;
      means[k] = sum / (end - k * blockFrames);
    }
    for (let k = 0; k < blocks; k++) {
      const lo = Math.max(0, k - halfBlocks);
      const hi = Math.min(blocks - 1, k + halfBlocks);
      const w = scratch.subarray(0, hi - lo + 1);
      w.set(means.subarray(lo, hi + 1));
      w.sort();
      anchor[k] = w[Math.floor(percentile * (w.length - 1))]!;
    }
    for (let t = 0; t < frames; t++) {
      // Block k's value sits at its centre frame; interpolate linearly between centres.
      const position = Math.min(blocks - 1, Math.max(0, (t - (blockFrames - 1) / 2) / blockFrames));
      const k0 = Math.floor(position);
      const k1 = Math.min(blocks - 1, k0 + 1);
      const f = position - k0;
      out[t * bins + b] = anchor[k0]! * (1 - f) + anchor[k1]! * f;
    }
  }
  return out;
}

/** STFT size of about `seconds` at `sampleRate`, rounded to a power of two. */
export function fftSizeFor(sampleRate: number, seconds: number): number {
  return 2 ** Math.round(Math.log2(sampleRate * seconds));
}

/**
 * Restores the band of `estimate` above `cutoffHz` (lost by running a model at a lower rate) by masking the
 * mixture: each frame's gain is the estimate-to-mixture magnitude ratio measured just below the cutoff.
 * Below the cutoff the estimate is kept; a short raised-cosine crossover joins the two.
 */
export function extendBandByMask(estimate: Float32Array, mixture: Float32Array, sampleRate: number, cutoffHz: number): Float32Array {
  const fftSize = fftSizeFor(sampleRate, 0.032);
  // Centred frames, zero padded, periodic Hann window.
  const options: StftOptions = { fftSize, hopSize: fftSize / 4, padMode: 'constant' };
  const e = stft(estimate, options);
  const x = stft(mixture, options);
  const { frames, bins } = e;
  const binHz = sampleRate / fftSize;
  const crossLow = Math.floor((cutoffHz * 0.9) / binHz);
  const crossHigh = Math.min(bins - 1, Math.ceil(cutoffHz / binHz));
  const refLow = Math.floor((cutoffHz * 0.55) / binHz);
  for (let t = 0; t < frames; t++) {
    const row = t * bins;
    let eEnergy = 0;
    let xEnergy = 0;
    for (let k = refLow; k < crossLow; k++) {
      eEnergy += e.re[row + k]! ** 2 + e.im[row + k]! ** 2;
      xEnergy += x.re[row + k]! ** 2 + x.im[row + k]! ** 2;
    }
    const gain = xEnergy > 0 ? Math.min(1, Math.sqrt(eEnergy / xEnergy)) : 0;
    for (let k = crossLow; k < bins; k++) {
      const fade = k >= crossHigh ? 1 : 0.5 - 0.5 * Math.cos((Math.PI * (k - crossLow)) / (crossHigh - crossLow));
      e.re[row + k] = (1 - fade) * e.re[row + k]! + fade * gain * x.re[row + k]!;
      e.im[row + k] = (1 - fade) * e.im[row + k]! + fade * gain * x.im[row + k]!;
    }
  }
  return istft(e, { ...options, length: estimate.length });
}

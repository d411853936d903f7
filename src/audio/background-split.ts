/**
 * Splits a background (soundtrack minus dialogue) into music, sound effects and ambience with soft spectral masks
 * that sum to one in every time-frequency bin, so the three parts add back to the background:
 * - ambience: the stationary floor, a long-window low percentile of each bin's magnitude (minimum statistics);
 * - of what rises above the floor, music is the part that persists over seconds (a long-window median per bin:
 *   music plays through) and sfx the excess above it (events: barks, horns, calls), Wiener-weighted.
 *   A long median beat short-median harmonic/percussive separation here: tonal effects (horns, bird calls) went to
 *   music with HPSS (bench/separation.ts: sfx SI-SDRi -1.0 dB with HPSS, +6.5 dB with this).
 */
import { fftSizeFor, magnitude, runningPercentile } from './spectral-masks.js';
import { istft, stft, type StftOptions } from './stft.js';

export interface BackgroundParts {
  music: Float32Array;
  sfx: Float32Array;
  ambience: Float32Array;
}

export interface BackgroundSplitOptions {
  /** Window of the stationary-floor statistic. */
  floorSeconds: number;
  /** Percentile of the floor statistic (0..1). */
  floorPercentile: number;
  /** Bias correction: a low percentile underestimates the mean level of a stationary noise. */
  floorGain: number;
  /** Window of the per-bin median that defines the persistent (music) level. */
  sustainSeconds: number;
}

export const defaultBackgroundSplit: BackgroundSplitOptions = {
  floorSeconds: 4,
  floorPercentile: 0.1,
  floorGain: 1.5,
  sustainSeconds: 3,
};

export function splitBackground(background: Float32Array, sampleRate: number, options = defaultBackgroundSplit): BackgroundParts {
  const fftSize = fftSizeFor(sampleRate, 0.046);
  // Half overlap: the masks are smooth, and it halves the cost against quarter overlap.
  const hop = fftSize / 2;
  // Centred frames, zero padded, periodic Hann window.
  const stftOptions: StftOptions = { fftSize, hopSize: hop, padMode: 'constant' };
  const spec = stft(background, stftOptions);
  const { frames, bins } = spec;
  const mag = magnitude(spec);
  const framesPerSecond = sampleRate / hop;
  const floorFrames = Math.max(3, Math.round(options.floorSeconds * framesPerSecond));
  const floor = runningPercentile(mag, frames, bins, floorFrames, options.floorPercentile, Math.max(1, Math.round(framesPerSecond / 10)));
  const rest = new Float32Array(mag.length);
  const ambienceMask = new Float32Array(mag.length);
  for (let i = 0; i < mag.length; i++) {
    const a = Math.min(mag[i]!, floor[i]! * options.floorGain);
    const r = mag[i]! - a;
    rest[i] = r;
    ambienceMask[i] = a + r > 0 ? (a * a) / (a * a + r * r) : 1 / 3;
  }
  const sustained = runningPercentile(
    rest,
    frames,
    bins,
    Math.round(options.sustainSeconds * framesPerSecond),
    0.5,
    Math.max(1, Math.round(framesPerSecond / 10)),
  );
  const transient = new Float32Array(mag.length);
  for (let i = 0; i < mag.length; i++) transient[i] = Math.max(0, rest[i]! - sustained[i]!);
  const musicRe = new Float32Array(mag.length);
  const musicIm = new Float32Array(mag.length);
  const sfxRe = new Float32Array(mag.length);
  const sfxIm = new Float32Array(mag.length);
  for (let i = 0; i < mag.length; i++) {
    const h = sustained[i]! ** 2;
    const p = transient[i]! ** 2;
    const restMask = 1 - ambienceMask[i]!;
    const musicShare = h + p > 0 ? h / (h + p) : 0.5;
    const m = restMask * musicShare;
    const s = restMask - m;
    musicRe[i] = spec.re[i]! * m;
    musicIm[i] = spec.im[i]! * m;
    sfxRe[i] = spec.re[i]! * s;
    sfxIm[i] = spec.im[i]! * s;
  }
  const music = istft({ ...spec, re: musicRe, im: musicIm }, { ...stftOptions, length: background.length });
  const sfx = istft({ ...spec, re: sfxRe, im: sfxIm }, { ...stftOptions, length: background.length });
  // Ambience takes the exact remainder, so the three parts sum to the background to float precision.
  const ambience = new Float32Array(background.length);
  for (let i = 0; i < ambience.length; i++) ambience[i] = background[i]! - music[i]! - sfx[i]!;
  return { music, sfx, ambience };
}

/** Level measurement and normalisation of speech. */
import { rmsDb, peak } from './waveform.js';

/**
 * Fraction of samples sitting at the waveform's peak magnitude. Natural audio touches its peak a few times; a clipped
 * recording has flat tops there, even if it was scaled down after clipping.
 */
export function clippedFraction(samples: Float32Array): number {
  const top = peak(samples);
  if (top < 0.25) return 0;
  let clipped = 0;
  for (let i = 0; i < samples.length; i++) if (Math.abs(samples[i]!) >= 0.999 * top) clipped++;
  return samples.length === 0 ? 0 : clipped / samples.length;
}

/** Scales speech to `targetDb` RMS, limited so the peak stays below full scale. */
export function normalizeSpeech(samples: Float32Array, targetDb = -20): Float32Array {
  const level = rmsDb(samples);
  if (!Number.isFinite(level)) return samples;
  const maxPeak = peak(samples);
  const gain = Math.min(10 ** ((targetDb - level) / 20), maxPeak > 0 ? 0.98 / maxPeak : 1);
  return samples.map((v) => v * gain);
}

/**
 * Gain to `targetDbfs` RMS (20 log10 of the RMS re. full scale 1.0). With `increaseOnly`, louder
 * input is left alone. No peak limiting: this feeds analysis (e.g. speaker embedding), not playback.
 */
export function normalizeVolume(samples: Float32Array, targetDbfs: number, options: { increaseOnly?: boolean } = {}): Float32Array {
  const level = rmsDb(samples);
  if (!Number.isFinite(level)) return samples;
  const changeDb = targetDbfs - level;
  if (options.increaseOnly && changeDb < 0) return samples;
  const gain = 10 ** (changeDb / 20);
  return samples.map((v) => v * gain);
}

/**
 * RMS in dBFS over the 50 ms frames louder than `floorDb` (-Infinity when none is): the level of speech without the
 * pauses within it, so that a line with long pauses and one without compare as heard.
 */
export function activeRmsDb(samples: Float32Array, sampleRate: number, floorDb = -50): number {
  const frame = Math.max(1, Math.round(sampleRate * 0.05));
  let sum = 0;
  let count = 0;
  for (let start = 0; start < samples.length; start += frame) {
    const piece = samples.subarray(start, Math.min(samples.length, start + frame));
    if (rmsDb(piece) > floorDb) {
      for (let i = 0; i < piece.length; i++) sum += piece[i]! * piece[i]!;
      count += piece.length;
    }
  }
  return count === 0 ? -Infinity : 10 * Math.log10(sum / count);
}

/**
 * Shortening long silences inside speech (Resemblyzer's `trim_long_silences`): per-window voice decisions, smoothed by a
 * moving average, dilated, then every window not kept is cut out. The voice decisions are pluggable: a cheap energy
 * detector, or Silero VAD probabilities.
 */
import type { SileroVad } from './vad.js';
import { vadSampleRate, vadWindowSamples } from './vad.js';

/** One 0/1 speech decision per window of `windowSamples` samples (the last partial window is not judged). */
export type VoiceFlagger = (samples: Float32Array, sampleRate: number, windowSamples: number) => Promise<Uint8Array>;

export interface TrimOptions {
  /** Decision window; Resemblyzer uses 30 ms. */
  windowSeconds: number;
  /** Windows averaged to smooth the decisions; a window stays voiced when more than half of them are. */
  movingAverageWindows: number;
  /** Voiced regions are widened to cover windows within this many windows, so short pauses survive. */
  dilationWindows: number;
}

export const resemblyzerTrim: TrimOptions = { windowSeconds: 0.03, movingAverageWindows: 8, dilationWindows: 7 };

/**
 * Speech if the window's level is well above the recording's noise floor (its 10th-percentile window level) and not far
 * below its loud windows (95th percentile), with an absolute floor for digital near-silence.
 */
export const energyVoiceFlags: VoiceFlagger = async (samples, _sampleRate, windowSamples) => {
  const windows = Math.floor(samples.length / windowSamples);
  const levels = new Float64Array(windows);
  for (let w = 0; w < windows; w++) {
    let sum = 0;
    for (let i = w * windowSamples; i < (w + 1) * windowSamples; i++) sum += samples[i]! * samples[i]!;
    levels[w] = 10 * Math.log10(sum / windowSamples + 1e-12);
  }
  const sorted = Float64Array.from(levels).sort();
  const percentile = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? -120;
  const threshold = Math.max(-60, Math.min(percentile(0.1) + 12, percentile(0.95) - 25));
  return Uint8Array.from(levels, (level) => (level > threshold ? 1 : 0));
};

/** Silero VAD probabilities (32 ms windows at 16 kHz) mapped onto the requested windows by their centre time. */
export function sileroVoiceFlags(vad: SileroVad, threshold = 0.5): VoiceFlagger {
  return async (samples, sampleRate, windowSamples) => {
    if (sampleRate !== vadSampleRate) throw new RangeError(`Silero VAD runs at ${vadSampleRate} Hz, got ${sampleRate}`);
    const probabilities = await vad.probabilities(samples);
    const windows = Math.floor(samples.length / windowSamples);
    return Uint8Array.from({ length: windows }, (_, w) => {
      const centre = Math.floor(((w + 0.5) * windowSamples) / vadWindowSamples);
      return (probabilities[Math.min(centre, probabilities.length - 1)] ?? 0) >= threshold ? 1 : 0;
    });
  };
}

/** Which windows to keep: moving-average smoothing (majority) then dilation, as Resemblyzer does. */
export function keptWindows(flags: Uint8Array, options: TrimOptions): Uint8Array {
  const n = flags.length;
  const width = options.movingAverageWindows;
  const before = Math.floor((width - 1) / 2);
  const smoothed = new Uint8Array(n);
  for (let w = 0; w < n; w++) {
    let voiced = 0;
    for (let j = w - before; j < w - before + width; j++) if (j >= 0 && j < n) voiced += flags[j]!;
    // numpy rounds half to even, so exactly half voiced counts as silence.
    smoothed[w] = 2 * voiced > width ? 1 : 0;
  }
  const reach = Math.floor(options.dilationWindows / 2);
  const kept = new Uint8Array(n);
  for (let w = 0; w < n; w++) {
    for (let j = Math.max(0, w - reach); j <= Math.min(n - 1, w + reach); j++) {
      if (smoothed[j]) {
        kept[w] = 1;
        break;
      }
    }
  }
  return kept;
}

/** The signal with long silences removed (its length is cut to whole windows first). */
export async function trimLongSilences(
  samples: Float32Array,
  sampleRate: number,
  voiceFlags: VoiceFlagger = energyVoiceFlags,
  options: TrimOptions = resemblyzerTrim,
): Promise<Float32Array> {
  const windowSamples = Math.round(options.windowSeconds * sampleRate);
  const kept = keptWindows(await voiceFlags(samples, sampleRate, windowSamples), options);
  let total = 0;
  for (const k of kept) total += k;
  const out = new Float32Array(total * windowSamples);
  let offset = 0;
  kept.forEach((keep, w) => {
    if (!keep) return;
    out.set(samples.subarray(w * windowSamples, (w + 1) * windowSamples), offset);
    offset += windowSamples;
  });
  return out;
}

/**
 * The signal with its leading and trailing silence cut down to at most `leadingSeconds` / `trailingSeconds` (silence =
 * 10 ms frames below `thresholdDb` dBFS). Used where synthesised pieces are joined, so a join is not a gap.
 */
export function trimEdgeSilence(
  samples: Float32Array,
  sampleRate: number,
  options: { leadingSeconds: number; trailingSeconds: number; thresholdDb?: number },
): Float32Array {
  const frame = Math.max(1, Math.round(sampleRate / 100));
  const threshold = 10 ** ((options.thresholdDb ?? -60) / 10);
  const loud = (start: number): boolean => {
    let sum = 0;
    const end = Math.min(samples.length, start + frame);
    for (let i = start; i < end; i++) sum += samples[i]! * samples[i]!;
    return sum / (end - start) > threshold;
  };
  let first = 0;
  while (first < samples.length && !loud(first)) first += frame;
  if (first >= samples.length) return samples;
  let last = Math.floor((samples.length - 1) / frame) * frame;
  while (last > first && !loud(last)) last -= frame;
  const start = Math.max(0, first - Math.round(options.leadingSeconds * sampleRate));
  const end = Math.min(samples.length, last + frame + Math.round(options.trailingSeconds * sampleRate));
  return samples.subarray(start, end);
}

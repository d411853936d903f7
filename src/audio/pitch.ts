/**
 * Fundamental-frequency tracking with YIN (de Cheveigné & Kawahara 2002): cumulative-mean-normalised difference,
 * absolute threshold, parabolic interpolation. Used to measure prosody (F0 level and range) of synthesised speech.
 */
export interface PitchTrackOptions {
  minHz: number;
  maxHz: number;
  frameSeconds: number;
  hopSeconds: number;
  threshold: number;
}

const defaults: PitchTrackOptions = { minHz: 60, maxHz: 600, frameSeconds: 0.04, hopSeconds: 0.01, threshold: 0.25 };

/** F0 per hop in Hz; 0 marks unvoiced (or silent) frames. */
export function trackPitch(samples: Float32Array, sampleRate: number, options: Partial<PitchTrackOptions> = {}): Float32Array {
  const o = { ...defaults, ...options };
  const window = Math.round(o.frameSeconds * sampleRate);
  const hop = Math.round(o.hopSeconds * sampleRate);
  const minLag = Math.max(2, Math.floor(sampleRate / o.maxHz));
  const maxLag = Math.min(Math.ceil(sampleRate / o.minHz), window - 1);
  const frames = Math.max(0, Math.floor((samples.length - window - maxLag) / hop));
  const f0 = new Float32Array(frames);
  const diff = new Float64Array(maxLag + 1);
  let globalEnergy = 0;
  for (let i = 0; i < samples.length; i++) globalEnergy += samples[i]! * samples[i]!;
  const silence = (globalEnergy / Math.max(1, samples.length)) * 0.01;
  for (let f = 0; f < frames; f++) {
    const start = f * hop;
    let energy = 0;
    for (let i = 0; i < window; i++) energy += samples[start + i]! * samples[start + i]!;
    if (energy / window < silence) continue;
    for (let lag = 1; lag <= maxLag; lag++) {
      let sum = 0;
      for (let i = 0; i < window; i++) {
        const d = samples[start + i]! - samples[start + i + lag]!;
        sum += d * d;
      }
      diff[lag] = sum;
    }
    let running = 0;
    let chosen = -1;
    const normalised = new Float64Array(maxLag + 1);
    normalised[0] = 1;
    for (let lag = 1; lag <= maxLag; lag++) {
      running += diff[lag]!;
      normalised[lag] = running > 0 ? (diff[lag]! * lag) / running : 1;
    }
    for (let lag = minLag; lag <= maxLag; lag++) {
      if (normalised[lag]! < o.threshold) {
        while (lag + 1 <= maxLag && normalised[lag + 1]! < normalised[lag]!) lag++;
        chosen = lag;
        break;
      }
    }
    if (chosen < 0) continue;
    const before = normalised[chosen - 1] ?? normalised[chosen]!;
    const after = normalised[chosen + 1] ?? normalised[chosen]!;
    const denominator = before - 2 * normalised[chosen]! + after;
    const shift = denominator !== 0 ? (0.5 * (before - after)) / denominator : 0;
    f0[f] = sampleRate / (chosen + shift);
  }
  return f0;
}

export interface PitchStatistics {
  /** Median voiced F0 in Hz (0 when nothing is voiced). */
  medianHz: number;
  /** Spread of voiced F0: 90th minus 10th percentile, in semitones. */
  rangeSemitones: number;
  /** Fraction of analysed frames that are voiced. */
  voicedFraction: number;
}

export function pitchStatistics(f0: Float32Array): PitchStatistics {
  const voiced = Array.from(f0)
    .filter((v) => v > 0)
    .sort((a, b) => a - b);
  if (voiced.length === 0) return { medianHz: 0, rangeSemitones: 0, voicedFraction: 0 };
  const at = (q: number) => voiced[Math.min(voiced.length - 1, Math.floor(q * voiced.length))]!;
  return { medianHz: at(0.5), rangeSemitones: 12 * Math.log2(at(0.9) / at(0.1)), voicedFraction: voiced.length / f0.length };
}

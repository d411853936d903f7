/** Level and timbre shaping applied after synthesis: gain, spectral tilt (high shelf) and a peak guard. */

/** Multiplies by a gain in dB (in place). */
export function applyGainDb(samples: Float32Array, gainDb: number): void {
  if (gainDb === 0) return;
  const factor = 10 ** (gainDb / 20);
  for (let i = 0; i < samples.length; i++) samples[i]! *= factor;
}

/**
 * Tilts the spectrum with a high shelf (RBJ biquad, slope 1): `gainDb` above `cornerHz`, 0 dB well below it.
 * Positive values brighten (pressed, tense voice), negative values darken (soft, lax voice). In place.
 */
export function applySpectralTilt(samples: Float32Array, sampleRate: number, gainDb: number, cornerHz = 1000): void {
  if (gainDb === 0) return;
  const a = 10 ** (gainDb / 40);
  const w0 = (2 * Math.PI * cornerHz) / sampleRate;
  const cos = Math.cos(w0);
  const alpha = (Math.sin(w0) / 2) * Math.SQRT2;
  const sqrtA2alpha = 2 * Math.sqrt(a) * alpha;
  const b0 = a * (a + 1 + (a - 1) * cos + sqrtA2alpha);
  const b1 = -2 * a * (a - 1 + (a + 1) * cos);
  const b2 = a * (a + 1 + (a - 1) * cos - sqrtA2alpha);
  const a0 = a + 1 - (a - 1) * cos + sqrtA2alpha;
  const a1 = 2 * (a - 1 - (a + 1) * cos);
  const a2 = a + 1 - (a - 1) * cos - sqrtA2alpha;
  let x1 = 0;
  let x2 = 0;
  let y1 = 0;
  let y2 = 0;
  for (let i = 0; i < samples.length; i++) {
    const x = samples[i]!;
    const y = (b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2) / a0;
    x2 = x1;
    x1 = x;
    y2 = y1;
    y1 = y;
    samples[i] = y;
  }
}

/** Scales the whole chunk down if its peak exceeds `ceiling` (no clipping, no pumping within a chunk). In place. */
export function guardPeak(samples: Float32Array, ceiling = 0.97): void {
  let max = 0;
  for (let i = 0; i < samples.length; i++) max = Math.max(max, Math.abs(samples[i]!));
  if (max <= ceiling) return;
  const factor = ceiling / max;
  for (let i = 0; i < samples.length; i++) samples[i]! *= factor;
}

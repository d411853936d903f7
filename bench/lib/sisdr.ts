/** Separation quality metrics shared by tests and benchmarks. */

/**
 * Scale-invariant signal-to-distortion ratio in dB (Le Roux et al. 2019), both signals made zero-mean.
 * A silent reference has no defined SI-SDR: returns NaN.
 */
export function siSdr(estimate: Float32Array, reference: Float32Array): number {
  const n = Math.min(estimate.length, reference.length);
  let meanE = 0;
  let meanR = 0;
  for (let i = 0; i < n; i++) {
    meanE += estimate[i]!;
    meanR += reference[i]!;
  }
  meanE /= n;
  meanR /= n;
  let dot = 0;
  let refEnergy = 0;
  for (let i = 0; i < n; i++) {
    const r = reference[i]! - meanR;
    dot += (estimate[i]! - meanE) * r;
    refEnergy += r * r;
  }
  if (refEnergy === 0) return NaN;
  const alpha = dot / refEnergy;
  let target = 0;
  let noise = 0;
  for (let i = 0; i < n; i++) {
    const t = alpha * (reference[i]! - meanR);
    const e = estimate[i]! - meanE - t;
    target += t * t;
    noise += e * e;
  }
  return 10 * Math.log10(Math.max(target, 1e-20) / Math.max(noise, 1e-20));
}

/** Energy of `error` relative to `reference` in dB (e.g. how far a sum of stems is from the input). */
export function relativeErrorDb(error: Float32Array, reference: Float32Array): number {
  let e = 0;
  let r = 0;
  for (let i = 0; i < reference.length; i++) {
    e += error[i]! * error[i]!;
    r += reference[i]! * reference[i]!;
  }
  return 10 * Math.log10(Math.max(e, 1e-30) / Math.max(r, 1e-30));
}

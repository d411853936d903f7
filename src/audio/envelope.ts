/**
 * Operations on spectral envelopes sampled on FFT bins 0..fftSize/2 (log power in nepers, `ln(power)`):
 * frequency warping and cepstral smoothing.
 */

/** Bin range [first, last) covering lowHz..highHz. */
export function bandBins(sampleRate: number, fftSize: number, lowHz: number, highHz: number): { first: number; last: number } {
  const binHz = sampleRate / fftSize;
  return { first: Math.max(0, Math.ceil(lowHz / binHz)), last: Math.min(fftSize / 2 + 1, Math.floor(highHz / binHz) + 1) };
}

function interpolate(values: Float64Array, position: number): number {
  const i = Math.min(values.length - 2, Math.max(0, Math.floor(position)));
  const f = Math.min(1, Math.max(0, position - i));
  return values[i]! * (1 - f) + values[i + 1]! * f;
}

/**
 * Piecewise-linear frequency warp: output frequency f takes the input's value at f / alpha up to a knee at
 * 0.8 * Nyquist * min(1, alpha), then a straight line to Nyquist (fixed), so alpha > 1 raises formants.
 * Returns, for each output bin, the (fractional) input bin to read.
 */
export function warpSourcePositions(bins: number, alpha: number): Float64Array {
  const nyquist = bins - 1;
  const knee = 0.8 * nyquist * Math.min(1, alpha);
  const kneeSource = knee / alpha;
  const positions = new Float64Array(bins);
  for (let k = 0; k < bins; k++) {
    positions[k] = k <= knee ? k / alpha : kneeSource + ((k - knee) * (nyquist - kneeSource)) / (nyquist - knee);
  }
  return positions;
}

export function warpEnvelope(logEnvelope: Float64Array, positions: Float64Array, out: Float64Array): void {
  for (let k = 0; k < out.length; k++) out[k] = interpolate(logEnvelope, positions[k]!);
}

/** Keeps the first `quefrencies` cepstral coefficients of a log spectrum on bins 0..N (cosine series of its even extension). */
export class CepstralSmoother {
  private readonly cosines: Float64Array;
  private readonly coefficients: Float64Array;

  constructor(
    private readonly bins: number,
    private readonly quefrencies: number,
  ) {
    const n = bins - 1;
    this.cosines = new Float64Array(quefrencies * bins);
    for (let q = 0; q < quefrencies; q++) for (let k = 0; k <= n; k++) this.cosines[q * bins + k] = Math.cos((Math.PI * q * k) / n);
    this.coefficients = new Float64Array(quefrencies);
  }

  smooth(logSpectrum: Float64Array, out: Float64Array): void {
    this.analyse(logSpectrum, this.coefficients);
    this.synthesise(this.coefficients, out);
  }

  /** The first `quefrencies` cepstral coefficients of a log spectrum (a compact, smooth form of an envelope). */
  analyse(logSpectrum: ArrayLike<number>, out: Float64Array | Float32Array): void {
    const n = this.bins - 1;
    for (let q = 0; q < this.quefrencies; q++) {
      let c = 0;
      for (let k = 0; k <= n; k++) c += (k === 0 || k === n ? 0.5 : 1) * logSpectrum[k]! * this.cosines[q * this.bins + k]!;
      out[q] = (2 * c) / n;
    }
  }

  /** The log spectrum of `analyse`'s coefficients. */
  synthesise(coefficients: ArrayLike<number>, out: Float64Array): void {
    for (let k = 0; k < this.bins; k++) {
      let v = coefficients[0]! / 2;
      for (let q = 1; q < this.quefrencies; q++) v += coefficients[q]! * this.cosines[q * this.bins + k]!;
      out[k] = v;
    }
  }
}

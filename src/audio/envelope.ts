/**
 * Operations on spectral envelopes sampled on FFT bins 0..fftSize/2 (log power in nepers, `ln(power)`):
 * mel-cepstral features, a coarse mel grid for compact storage, frequency warping and cepstral smoothing.
 */

export function hzToMel(hz: number): number {
  return 2595 * Math.log10(1 + hz / 700);
}

export function melToHz(mel: number): number {
  return 700 * (10 ** (mel / 2595) - 1);
}

/** Bin range [first, last) covering lowHz..highHz. */
export function bandBins(sampleRate: number, fftSize: number, lowHz: number, highHz: number): { first: number; last: number } {
  const binHz = sampleRate / fftSize;
  return { first: Math.max(0, Math.ceil(lowHz / binHz)), last: Math.min(fftSize / 2 + 1, Math.floor(highHz / binHz) + 1) };
}

/**
 * Mel-cepstrum of an envelope: triangular mel bands over the power envelope, log, DCT-II; coefficients 1..order
 * (c0, the level, is left out so features describe shape only).
 */
export class MelCepstrum {
  private readonly weights: Float64Array[];
  private readonly firstBins: Int32Array;
  private readonly cosines: Float64Array;
  private readonly logBands: Float64Array;

  constructor(sampleRate: number, fftSize: number, readonly bands: number, readonly order: number, lowHz: number, highHz: number) {
    const binHz = sampleRate / fftSize;
    const edges = Array.from({ length: bands + 2 }, (_, i) => melToHz(hzToMel(lowHz) + ((hzToMel(highHz) - hzToMel(lowHz)) * i) / (bands + 1)));
    this.weights = [];
    this.firstBins = new Int32Array(bands);
    for (let b = 0; b < bands; b++) {
      const [lo, mid, hi] = [edges[b]!, edges[b + 1]!, edges[b + 2]!];
      const first = Math.ceil(lo / binHz);
      const last = Math.floor(hi / binHz);
      const w = new Float64Array(Math.max(1, last - first + 1));
      for (let k = first; k <= last; k++) {
        const hz = k * binHz;
        w[k - first] = hz <= mid ? (hz - lo) / (mid - lo) : (hi - hz) / (hi - mid);
      }
      this.weights.push(w);
      this.firstBins[b] = first;
    }
    this.cosines = new Float64Array(order * bands);
    for (let q = 1; q <= order; q++) {
      for (let b = 0; b < bands; b++) this.cosines[(q - 1) * bands + b] = Math.cos((Math.PI * q * (b + 0.5)) / bands) * Math.sqrt(2 / bands);
    }
    this.logBands = new Float64Array(bands);
  }

  /** Features of a power envelope (linear power, not log). */
  compute(power: Float64Array, out: Float32Array, outOffset = 0): void {
    for (let b = 0; b < this.bands; b++) {
      const w = this.weights[b]!;
      const first = this.firstBins[b]!;
      let sum = 1e-12;
      for (let i = 0; i < w.length; i++) sum += w[i]! * (power[first + i] ?? 0);
      this.logBands[b] = Math.log(sum);
    }
    for (let q = 0; q < this.order; q++) {
      let c = 0;
      for (let b = 0; b < this.bands; b++) c += this.cosines[q * this.bands + b]! * this.logBands[b]!;
      out[outOffset + q] = c;
    }
  }
}

/** A log envelope stored at `points` mel-spaced frequencies (compact, keeps formant structure), and back. */
export class MelGrid {
  private readonly positions: Float64Array;
  private readonly lower: Int32Array;
  private readonly fraction: Float64Array;

  constructor(sampleRate: number, readonly fftSize: number, readonly points: number) {
    const bins = fftSize / 2 + 1;
    const binHz = sampleRate / fftSize;
    const topMel = hzToMel(sampleRate / 2);
    this.positions = Float64Array.from({ length: points }, (_, i) => melToHz((topMel * i) / (points - 1)) / binHz);
    // For the way back: each bin's place between two grid points.
    this.lower = new Int32Array(bins);
    this.fraction = new Float64Array(bins);
    let j = 0;
    for (let k = 0; k < bins; k++) {
      while (j < points - 2 && this.positions[j + 1]! < k) j++;
      const a = this.positions[j]!;
      const b = this.positions[j + 1]!;
      this.lower[k] = j;
      this.fraction[k] = Math.min(1, Math.max(0, (k - a) / (b - a)));
    }
  }

  toGrid(logEnvelope: Float64Array, out: Float32Array, outOffset = 0): void {
    for (let i = 0; i < this.points; i++) out[outOffset + i] = interpolate(logEnvelope, this.positions[i]!);
  }

  fromGrid(grid: Float32Array | Float64Array, gridOffset: number, out: Float64Array): void {
    for (let k = 0; k < out.length; k++) {
      const j = this.lower[k]!;
      const f = this.fraction[k]!;
      out[k] = grid[gridOffset + j]! * (1 - f) + grid[gridOffset + j + 1]! * f;
    }
  }
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
export function cepstralSmooth(logSpectrum: Float64Array, quefrencies: number): Float64Array {
  const n = logSpectrum.length - 1;
  const coefficients = new Float64Array(quefrencies);
  for (let q = 0; q < quefrencies; q++) {
    let c = 0;
    for (let k = 0; k <= n; k++) c += (k === 0 || k === n ? 0.5 : 1) * logSpectrum[k]! * Math.cos((Math.PI * q * k) / n);
    coefficients[q] = (2 * c) / n;
  }
  const smooth = new Float64Array(n + 1);
  for (let k = 0; k <= n; k++) {
    let v = coefficients[0]! / 2;
    for (let q = 1; q < quefrencies; q++) v += coefficients[q]! * Math.cos((Math.PI * q * k) / n);
    smooth[k] = v;
  }
  return smooth;
}

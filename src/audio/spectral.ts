/**
 * Spectral DSP for separation: real FFT of any size, windows, STFT/ISTFT, long-window percentiles, band extension.
 * Power-of-two sizes go straight to fft.js; other sizes (DeepFilterNet's 960) use Bluestein's algorithm on top of it.
 */
import FFT from 'fft.js';

/** Real-input FFT of a fixed size. Spectra are half spectra: size/2+1 bins as separate re/im arrays. */
export class RealFft {
  readonly size: number;
  readonly bins: number;
  private readonly pow2: FFT | undefined;
  private readonly bluestein: Bluestein | undefined;
  private readonly input: Float64Array;
  private readonly output: Float64Array;
  private readonly spectrum: Float64Array;

  constructor(size: number) {
    this.size = size;
    this.bins = size / 2 + 1;
    if (!Number.isInteger(this.bins)) throw new RangeError(`FFT size must be even, got ${size}`);
    const isPow2 = (size & (size - 1)) === 0;
    this.pow2 = isPow2 ? new FFT(size) : undefined;
    this.bluestein = isPow2 ? undefined : new Bluestein(size);
    this.input = new Float64Array(size * 2);
    this.output = new Float64Array(size * 2);
    this.spectrum = new Float64Array(size * 2);
  }

  /** Unnormalised forward transform: X[k] = sum x[n] e^{-2 pi i k n / N}. */
  forward(frame: ArrayLike<number>, re: Float32Array | Float64Array, im: Float32Array | Float64Array): void {
    const n = this.size;
    if (this.pow2) {
      const data = this.input.subarray(0, n);
      for (let i = 0; i < n; i++) data[i] = frame[i]!;
      this.pow2.realTransform(this.output, data);
    } else {
      for (let i = 0; i < n; i++) {
        this.input[2 * i] = frame[i]!;
        this.input[2 * i + 1] = 0;
      }
      this.bluestein!.transform(this.input, this.output, -1);
    }
    for (let k = 0; k < this.bins; k++) {
      re[k] = this.output[2 * k]!;
      im[k] = this.output[2 * k + 1]!;
    }
  }

  /** Inverse of `forward` (normalised by 1/N), real output of length size. */
  inverse(re: ArrayLike<number>, im: ArrayLike<number>, frame: Float32Array | Float64Array): void {
    const n = this.size;
    const spectrum = this.spectrum;
    for (let k = 0; k < this.bins; k++) {
      spectrum[2 * k] = re[k]!;
      spectrum[2 * k + 1] = k === 0 || k === n / 2 ? 0 : im[k]!;
    }
    for (let k = this.bins; k < n; k++) {
      spectrum[2 * k] = re[n - k]!;
      spectrum[2 * k + 1] = -im[n - k]!;
    }
    if (this.pow2) this.pow2.inverseTransform(this.output, spectrum);
    else {
      this.bluestein!.transform(spectrum, this.output, 1);
      for (let i = 0; i < 2 * n; i++) this.output[i]! /= n;
    }
    for (let i = 0; i < n; i++) frame[i] = this.output[2 * i]!;
  }
}

/** Arbitrary-size complex DFT as a convolution with a chirp, done with power-of-two FFTs. */
class Bluestein {
  private readonly n: number;
  private readonly fft: FFT;
  private readonly chirpRe: Float64Array;
  private readonly chirpIm: Float64Array;
  private readonly kernelForward: Float64Array;
  private readonly kernelInverse: Float64Array;
  private readonly a: Float64Array;
  private readonly b: Float64Array;

  constructor(n: number) {
    this.n = n;
    let m = 1;
    while (m < 2 * n - 1) m <<= 1;
    this.fft = new FFT(m);
    this.chirpRe = new Float64Array(n);
    this.chirpIm = new Float64Array(n);
    for (let k = 0; k < n; k++) {
      // k^2 mod 2n keeps the angle exact for large k.
      const angle = (Math.PI * ((k * k) % (2 * n))) / n;
      this.chirpRe[k] = Math.cos(angle);
      this.chirpIm[k] = Math.sin(angle);
    }
    this.kernelForward = this.kernel(m, 1);
    this.kernelInverse = this.kernel(m, -1);
    this.a = new Float64Array(2 * m);
    this.b = new Float64Array(2 * m);
  }

  private kernel(m: number, sign: number): Float64Array {
    const k = new Float64Array(2 * m);
    for (let i = 0; i < this.n; i++) {
      k[2 * i] = this.chirpRe[i]!;
      k[2 * i + 1] = sign * this.chirpIm[i]!;
      if (i > 0) {
        k[2 * (m - i)] = this.chirpRe[i]!;
        k[2 * (m - i) + 1] = sign * this.chirpIm[i]!;
      }
    }
    const out = new Float64Array(2 * m);
    this.fft.transform(out, k);
    return out;
  }

  /** Complex interleaved in -> out (length 2n each); direction -1 forward, +1 inverse (unnormalised). */
  transform(input: Float64Array, output: Float64Array, direction: -1 | 1): void {
    const { n, a, b } = this;
    const m = a.length / 2;
    const s = direction === -1 ? -1 : 1;
    a.fill(0);
    for (let k = 0; k < n; k++) {
      const cr = this.chirpRe[k]!;
      const ci = s * this.chirpIm[k]!;
      const xr = input[2 * k]!;
      const xi = input[2 * k + 1]!;
      a[2 * k] = xr * cr - xi * ci;
      a[2 * k + 1] = xr * ci + xi * cr;
    }
    this.fft.transform(b, a);
    const kernel = direction === -1 ? this.kernelForward : this.kernelInverse;
    for (let i = 0; i < m; i++) {
      const br = b[2 * i]!;
      const bi = b[2 * i + 1]!;
      const kr = kernel[2 * i]!;
      const ki = kernel[2 * i + 1]!;
      b[2 * i] = br * kr - bi * ki;
      b[2 * i + 1] = br * ki + bi * kr;
    }
    this.fft.inverseTransform(a, b);
    for (let k = 0; k < n; k++) {
      const cr = this.chirpRe[k]!;
      const ci = s * this.chirpIm[k]!;
      const yr = a[2 * k]!;
      const yi = a[2 * k + 1]!;
      output[2 * k] = yr * cr - yi * ci;
      output[2 * k + 1] = yr * ci + yi * cr;
    }
  }
}

/** Periodic Hann window (satisfies constant overlap-add at hops of size/2, size/4, ...). */
export function hannWindow(size: number): Float32Array {
  const w = new Float32Array(size);
  for (let i = 0; i < size; i++) w[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / size);
  return w;
}

/** Vorbis power-complementary window (w[n]^2 + w[n + size/2]^2 = 1), as used by DeepFilterNet. */
export function vorbisWindow(size: number): Float32Array {
  const w = new Float32Array(size);
  for (let i = 0; i < size; i++) {
    const s = Math.sin((Math.PI * (i + 0.5)) / size);
    w[i] = Math.sin(0.5 * Math.PI * s * s);
  }
  return w;
}

/** A one-channel STFT: frames x bins, row-major. Frame t is centred on sample t*hop. */
export interface Spectrogram {
  re: Float32Array;
  im: Float32Array;
  frames: number;
  bins: number;
  fftSize: number;
  hop: number;
  /** Length of the signal it was computed from (so the inverse restores it exactly). */
  signalLength: number;
}

export function frameCountFor(signalLength: number, hop: number): number {
  return Math.floor(signalLength / hop) + 1;
}

export function stft(signal: Float32Array, fftSize: number, hop: number, window: Float32Array, fft = new RealFft(fftSize)): Spectrogram {
  const frames = frameCountFor(signal.length, hop);
  const bins = fftSize / 2 + 1;
  const re = new Float32Array(frames * bins);
  const im = new Float32Array(frames * bins);
  const frame = new Float64Array(fftSize);
  const half = fftSize / 2;
  for (let t = 0; t < frames; t++) {
    const start = t * hop - half;
    for (let i = 0; i < fftSize; i++) {
      const j = start + i;
      frame[i] = j >= 0 && j < signal.length ? signal[j]! * window[i]! : 0;
    }
    fft.forward(frame, re.subarray(t * bins, (t + 1) * bins), im.subarray(t * bins, (t + 1) * bins));
  }
  return { re, im, frames, bins, fftSize, hop, signalLength: signal.length };
}

/** Weighted overlap-add inverse; divides by the summed squared window so any hop/window pair inverts exactly. */
export function istft(spec: Spectrogram, window: Float32Array, fft = new RealFft(spec.fftSize)): Float32Array {
  const { frames, bins, fftSize, hop, signalLength } = spec;
  const half = fftSize / 2;
  const out = new Float64Array(signalLength);
  const norm = new Float64Array(signalLength);
  const frame = new Float64Array(fftSize);
  for (let t = 0; t < frames; t++) {
    fft.inverse(spec.re.subarray(t * bins, (t + 1) * bins), spec.im.subarray(t * bins, (t + 1) * bins), frame);
    const start = t * hop - half;
    for (let i = 0; i < fftSize; i++) {
      const j = start + i;
      if (j < 0 || j >= signalLength) continue;
      out[j]! += frame[i]! * window[i]!;
      norm[j]! += window[i]! * window[i]!;
    }
  }
  const result = new Float32Array(signalLength);
  for (let j = 0; j < signalLength; j++) result[j] = norm[j]! > 1e-8 ? out[j]! / norm[j]! : 0;
  return result;
}

export function magnitude(spec: Spectrogram): Float32Array {
  const mag = new Float32Array(spec.re.length);
  for (let i = 0; i < mag.length; i++) mag[i] = Math.hypot(spec.re[i]!, spec.im[i]!);
  return mag;
}

/** Multiplies a spectrogram by a real mask (same layout); returns a new spectrogram. */
export function applyMask(spec: Spectrogram, mask: Float32Array): Spectrogram {
  const re = new Float32Array(spec.re.length);
  const im = new Float32Array(spec.im.length);
  for (let i = 0; i < re.length; i++) {
    re[i] = spec.re[i]! * mask[i]!;
    im[i] = spec.im[i]! * mask[i]!;
  }
  return { ...spec, re, im };
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
  const hop = fftSize / 4;
  const window = hannWindow(fftSize);
  const fft = new RealFft(fftSize);
  const e = stft(estimate, fftSize, hop, window, fft);
  const x = stft(mixture, fftSize, hop, window, fft);
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
  return istft(e, window, fft);
}

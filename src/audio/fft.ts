/**
 * Discrete Fourier transforms of any size, in float64: `Fft` (complex input) and `RealFft` (real input, half spectrum).
 *
 * Power-of-two sizes go straight to fft.js; other sizes (400 = 25 ms at 16 kHz, DeepFilterNet's 960) use Bluestein's
 * chirp-z algorithm on top of a power-of-two fft.js transform, which is exact up to rounding. A real transform of even
 * size N runs as one complex transform of size N/2 (even samples as real part, odd samples as imaginary part): half the
 * work of a complex transform of size N.
 *
 * Instances keep scratch buffers: reuse one per loop, not across interleaved callers.
 */
import FFT from 'fft.js';

/** Complex transform on interleaved arrays of 2 * size numbers: forward unnormalised, inverse normalised by 1/size. */
class ComplexTransform {
  private readonly direct: FFT | undefined;
  private readonly bluestein: Bluestein | undefined;

  constructor(readonly size: number) {
    if (size === 1) return;
    if ((size & (size - 1)) === 0) this.direct = new FFT(size);
    else this.bluestein = new Bluestein(size);
  }

  /** `output` must differ from `input`. */
  run(input: Float64Array, output: Float64Array, inverse: boolean): void {
    if (this.direct) {
      if (inverse) this.direct.inverseTransform(output, input);
      else this.direct.transform(output, input);
    } else if (this.bluestein) this.bluestein.run(input, output, inverse);
    else output.set(input.subarray(0, 2));
  }
}

/**
 * X[k] = conj(c[k]) * sum_n (x[n] conj(c[n])) c[k - n] with c[n] = exp(i pi n^2 / N): a convolution of length
 * >= 2N - 1, done with power-of-two FFTs. The inverse uses the conjugate chirp.
 */
class Bluestein {
  private readonly fft: FFT;
  private readonly chirpRe: Float64Array;
  private readonly chirpIm: Float64Array;
  /** FFT of the chirp (forward) and of its conjugate (inverse), laid out for circular convolution. */
  private readonly filterForward: Float64Array;
  private readonly filterInverse: Float64Array;
  private readonly a: Float64Array;
  private readonly b: Float64Array;

  constructor(private readonly size: number) {
    let padded = 1;
    while (padded < 2 * size - 1) padded *= 2;
    this.fft = new FFT(padded);
    this.chirpRe = new Float64Array(size);
    this.chirpIm = new Float64Array(size);
    for (let n = 0; n < size; n++) {
      // n^2 mod 2N keeps the angle small, so the chirp stays accurate for large n.
      const angle = (Math.PI * ((n * n) % (2 * size))) / size;
      this.chirpRe[n] = Math.cos(angle);
      this.chirpIm[n] = Math.sin(angle);
    }
    this.a = new Float64Array(2 * padded);
    this.b = new Float64Array(2 * padded);
    this.filterForward = this.filter(padded, 1);
    this.filterInverse = this.filter(padded, -1);
  }

  private filter(padded: number, sign: 1 | -1): Float64Array {
    const kernel = this.a.fill(0);
    for (let n = 0; n < this.size; n++) {
      kernel[2 * n] = this.chirpRe[n]!;
      kernel[2 * n + 1] = sign * this.chirpIm[n]!;
      if (n > 0) {
        kernel[2 * (padded - n)] = this.chirpRe[n]!;
        kernel[2 * (padded - n) + 1] = sign * this.chirpIm[n]!;
      }
    }
    const out = new Float64Array(2 * padded);
    this.fft.transform(out, kernel);
    return out;
  }

  run(input: Float64Array, output: Float64Array, inverse: boolean): void {
    const { size, a, b, chirpRe, chirpIm } = this;
    const sign = inverse ? 1 : -1;
    a.fill(0);
    for (let n = 0; n < size; n++) {
      // x[n] * conj(c[n]) forward, x[n] * c[n] inverse
      const cr = chirpRe[n]!;
      const ci = sign * chirpIm[n]!;
      const xr = input[2 * n]!;
      const xi = input[2 * n + 1]!;
      a[2 * n] = xr * cr - xi * ci;
      a[2 * n + 1] = xr * ci + xi * cr;
    }
    this.fft.transform(b, a);
    const filter = inverse ? this.filterInverse : this.filterForward;
    for (let k = 0; k < b.length; k += 2) {
      const br = b[k]!;
      const bi = b[k + 1]!;
      const fr = filter[k]!;
      const fi = filter[k + 1]!;
      b[k] = br * fr - bi * fi;
      b[k + 1] = br * fi + bi * fr;
    }
    this.fft.inverseTransform(a, b);
    const scale = inverse ? 1 / size : 1;
    for (let k = 0; k < size; k++) {
      const cr = chirpRe[k]! * scale;
      const ci = sign * chirpIm[k]! * scale;
      const yr = a[2 * k]!;
      const yi = a[2 * k + 1]!;
      output[2 * k] = yr * cr - yi * ci;
      output[2 * k + 1] = yr * ci + yi * cr;
    }
  }
}

function checkSize(size: number): void {
  if (!Number.isInteger(size) || size < 2) throw new RangeError(`FFT size must be an integer >= 2, got ${size}`);
}

/** Complex DFT of one fixed size, in place on separate real and imaginary arrays. */
export class Fft {
  private readonly transform: ComplexTransform;
  private readonly input: Float64Array;
  private readonly output: Float64Array;

  constructor(readonly size: number) {
    checkSize(size);
    this.transform = new ComplexTransform(size);
    this.input = new Float64Array(2 * size);
    this.output = new Float64Array(2 * size);
  }

  /** In-place forward transform (sign -1, unnormalised) of re + i im. */
  forward(re: Float64Array, im: Float64Array): void {
    this.run(re, im, false);
  }

  /** In-place inverse transform, normalised by 1/N. */
  inverse(re: Float64Array, im: Float64Array): void {
    this.run(re, im, true);
  }

  private run(re: Float64Array, im: Float64Array, inverse: boolean): void {
    const { input, output } = this;
    for (let n = 0; n < this.size; n++) {
      input[2 * n] = re[n]!;
      input[2 * n + 1] = im[n]!;
    }
    this.transform.run(input, output, inverse);
    for (let k = 0; k < this.size; k++) {
      re[k] = output[2 * k]!;
      im[k] = output[2 * k + 1]!;
    }
  }
}

/**
 * DFT of real frames of one fixed size. Spectra are half spectra: bins = floor(size / 2) + 1 values in separate re/im
 * arrays (the other bins are their complex conjugates).
 */
export class RealFft {
  readonly bins: number;
  /** Complex transform of size/2 for even sizes, of size for odd ones. */
  private readonly transform: ComplexTransform;
  /** exp(-2 pi i k / size) for k = 0..size/2 (even sizes). */
  private readonly twiddleRe: Float64Array;
  private readonly twiddleIm: Float64Array;
  private readonly input: Float64Array;
  private readonly output: Float64Array;

  constructor(readonly size: number) {
    checkSize(size);
    this.bins = Math.floor(size / 2) + 1;
    const even = size % 2 === 0;
    const complexSize = even ? size / 2 : size;
    this.transform = new ComplexTransform(complexSize);
    this.input = new Float64Array(2 * complexSize);
    this.output = new Float64Array(2 * complexSize);
    this.twiddleRe = new Float64Array(even ? this.bins : 0);
    this.twiddleIm = new Float64Array(even ? this.bins : 0);
    for (let k = 0; k < this.twiddleRe.length; k++) {
      this.twiddleRe[k] = Math.cos((2 * Math.PI * k) / size);
      this.twiddleIm[k] = -Math.sin((2 * Math.PI * k) / size);
    }
  }

  /** Unnormalised forward transform of `frame` (length size): X[k] = sum x[n] e^{-2 pi i k n / N}, k < bins. */
  forward(frame: ArrayLike<number>, re: Float32Array | Float64Array, im: Float32Array | Float64Array): void {
    const { size, input, output } = this;
    if (size % 2 === 1) {
      for (let n = 0; n < size; n++) {
        input[2 * n] = frame[n]!;
        input[2 * n + 1] = 0;
      }
      this.transform.run(input, output, false);
      for (let k = 0; k < this.bins; k++) {
        re[k] = output[2 * k]!;
        im[k] = output[2 * k + 1]!;
      }
      return;
    }
    const half = size / 2;
    for (let n = 0; n < size; n++) input[n] = frame[n]!;
    this.transform.run(input, output, false);
    // Z = DFT(even + i odd); X[k] = E[k] + W^k O[k] with E = (Z[k] + conj Z[half-k]) / 2, O = (Z[k] - conj Z[half-k]) / 2i.
    const { twiddleRe, twiddleIm } = this;
    for (let k = 0; k <= half; k++) {
      const j = k === 0 || k === half ? 0 : half - k;
      const zr = output[2 * (k === half ? 0 : k)]!;
      const zi = output[2 * (k === half ? 0 : k) + 1]!;
      const yr = output[2 * j]!;
      const yi = output[2 * j + 1]!;
      const er = 0.5 * (zr + yr);
      const ei = 0.5 * (zi - yi);
      const or = 0.5 * (zi + yi);
      const oi = -0.5 * (zr - yr);
      const wr = twiddleRe[k]!;
      const wi = twiddleIm[k]!;
      re[k] = er + wr * or - wi * oi;
      im[k] = ei + wr * oi + wi * or;
    }
  }

  /**
   * Inverse of `forward` (normalised by 1/N) into `frame` (length size). The imaginary parts of bin 0 and, for even
   * sizes, bin size/2 are ignored, as the spectrum of a real frame has none.
   */
  inverse(re: ArrayLike<number>, im: ArrayLike<number>, frame: Float32Array | Float64Array): void {
    const { size, input, output } = this;
    if (size % 2 === 1) {
      input[0] = re[0]!;
      input[1] = 0;
      for (let k = 1; k < this.bins; k++) {
        input[2 * k] = re[k]!;
        input[2 * k + 1] = im[k]!;
        input[2 * (size - k)] = re[k]!;
        input[2 * (size - k) + 1] = -im[k]!;
      }
      this.transform.run(input, output, true);
      for (let n = 0; n < size; n++) frame[n] = output[2 * n]!;
      return;
    }
    const half = size / 2;
    // E[k] = (X[k] + conj X[half-k]) / 2, O[k] = (X[k] - conj X[half-k]) conj(W^k) / 2; IDFT(E + i O) = even + i odd.
    const { twiddleRe, twiddleIm } = this;
    for (let k = 0; k < half; k++) {
      const j = half - k;
      const xr = re[k]!;
      const xi = k === 0 ? 0 : im[k]!;
      const yr = re[j]!;
      const yi = j === half ? 0 : im[j]!;
      const er = 0.5 * (xr + yr);
      const ei = 0.5 * (xi - yi);
      const dr = 0.5 * (xr - yr);
      const di = 0.5 * (xi + yi);
      const wr = twiddleRe[k]!;
      const wi = -twiddleIm[k]!;
      const or = dr * wr - di * wi;
      const oi = dr * wi + di * wr;
      input[2 * k] = er - oi;
      input[2 * k + 1] = ei + or;
    }
    this.transform.run(input, output, true);
    for (let n = 0; n < size; n++) frame[n] = output[n]!;
  }
}

/**
 * Short-time Fourier transform of any size, window and hop (librosa's framing conventions), and its inverse.
 *
 * Power-of-two sizes go straight to fft.js; other sizes (e.g. 400 = 25 ms at 16 kHz) use Bluestein's chirp-z algorithm on
 * top of a power-of-two fft.js transform, which is exact up to rounding. Everything is computed in float64.
 */
import FFT from 'fft.js';

/** Complex DFT of one fixed size. Not thread-safe: reuse one per loop, not across concurrent callers. */
export class Fft {
  private readonly direct: FFT | undefined;
  private readonly bluestein: { fft: FFT; chirpRe: Float64Array; chirpIm: Float64Array; filter: number[] } | undefined;
  private readonly input: number[];
  private readonly output: number[];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 2) throw new RangeError(`FFT size must be an integer >= 2, got ${size}`);
    if ((size & (size - 1)) === 0) {
      this.direct = new FFT(size);
      this.input = this.direct.createComplexArray();
      this.output = this.direct.createComplexArray();
      return;
    }
    // Bluestein: X[k] = conj(c[k]) * sum_n (x[n] conj(c[n])) c[k - n] with c[n] = exp(i pi n^2 / N), a convolution of
    // length >= 2N - 1 done with a power-of-two FFT.
    let padded = 1;
    while (padded < 2 * size - 1) padded *= 2;
    const fft = new FFT(padded);
    const chirpRe = new Float64Array(size);
    const chirpIm = new Float64Array(size);
    for (let n = 0; n < size; n++) {
      // n^2 mod 2N keeps the angle small, so the chirp stays accurate for large n.
      const angle = (Math.PI * ((n * n) % (2 * size))) / size;
      chirpRe[n] = Math.cos(angle);
      chirpIm[n] = Math.sin(angle);
    }
    const kernel = fft.createComplexArray();
    for (let n = 0; n < size; n++) {
      kernel[2 * n] = chirpRe[n]!;
      kernel[2 * n + 1] = chirpIm[n]!;
      if (n > 0) {
        kernel[2 * (padded - n)] = chirpRe[n]!;
        kernel[2 * (padded - n) + 1] = chirpIm[n]!;
      }
    }
    const filter = fft.createComplexArray();
    fft.transform(filter, kernel);
    this.bluestein = { fft, chirpRe, chirpIm, filter };
    this.input = fft.createComplexArray();
    this.output = fft.createComplexArray();
  }

  /** In-place forward transform (sign -1, unnormalised) of re + i im. */
  forward(re: Float64Array, im: Float64Array): void {
    if (this.direct) {
      for (let n = 0; n < this.size; n++) {
        this.input[2 * n] = re[n]!;
        this.input[2 * n + 1] = im[n]!;
      }
      this.direct.transform(this.output, this.input);
      for (let k = 0; k < this.size; k++) {
        re[k] = this.output[2 * k]!;
        im[k] = this.output[2 * k + 1]!;
      }
      return;
    }
    const { fft, chirpRe, chirpIm, filter } = this.bluestein!;
    const a = this.input;
    a.fill(0);
    for (let n = 0; n < this.size; n++) {
      // x[n] * conj(c[n])
      a[2 * n] = re[n]! * chirpRe[n]! + im[n]! * chirpIm[n]!;
      a[2 * n + 1] = im[n]! * chirpRe[n]! - re[n]! * chirpIm[n]!;
    }
    const spectrum = this.output;
    fft.transform(spectrum, a);
    for (let k = 0; k < spectrum.length / 2; k++) {
      const xr = spectrum[2 * k]!;
      const xi = spectrum[2 * k + 1]!;
      const fr = filter[2 * k]!;
      const fi = filter[2 * k + 1]!;
      a[2 * k] = xr * fr - xi * fi;
      a[2 * k + 1] = xr * fi + xi * fr;
    }
    fft.inverseTransform(spectrum, a);
    for (let k = 0; k < this.size; k++) {
      const yr = spectrum[2 * k]!;
      const yi = spectrum[2 * k + 1]!;
      re[k] = yr * chirpRe[k]! + yi * chirpIm[k]!;
      im[k] = yi * chirpRe[k]! - yr * chirpIm[k]!;
    }
  }

  /** In-place inverse transform, normalised by 1/N. */
  inverse(re: Float64Array, im: Float64Array): void {
    // ifft(x) = conj(fft(conj(x))) / N
    for (let n = 0; n < this.size; n++) im[n] = -im[n]!;
    this.forward(re, im);
    for (let n = 0; n < this.size; n++) {
      re[n] = re[n]! / this.size;
      im[n] = -im[n]! / this.size;
    }
  }
}

/** Hann window; periodic (the DFT-even form scipy's `get_window('hann', n)` and librosa use) unless `symmetric`. */
export function hannWindow(length: number, symmetric = false): Float64Array {
  const window = new Float64Array(length);
  const denominator = symmetric ? length - 1 : length;
  for (let n = 0; n < length; n++) window[n] = 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / denominator);
  return window;
}

export interface StftOptions {
  fftSize: number;
  hopSize: number;
  /** Length <= fftSize (centred inside the frame, as librosa does). Default: periodic Hann of fftSize. */
  window?: Float64Array;
  /** Pad fftSize/2 on both sides so frame t is centred on sample t * hopSize. Default true. */
  center?: boolean;
  /** How centring pads. Default 'reflect' (librosa before 0.10; 'constant' is zeros, librosa's later default). */
  padMode?: 'reflect' | 'constant';
}

/** Frame-major complex spectrogram: bin k of frame t is at index t * bins + k. */
export interface Spectrogram {
  frames: number;
  /** fftSize / 2 + 1 */
  bins: number;
  re: Float32Array;
  im: Float32Array;
}

function fullWindow(options: StftOptions): Float64Array {
  const window = options.window ?? hannWindow(options.fftSize);
  if (window.length > options.fftSize) throw new RangeError('window longer than fftSize');
  if (window.length === options.fftSize) return window;
  const padded = new Float64Array(options.fftSize);
  padded.set(window, Math.floor((options.fftSize - window.length) / 2));
  return padded;
}

/** Reads frame samples from the signal as if it were centre-padded, without copying the whole signal. */
function frameReader(samples: Float32Array, options: StftOptions): (start: number, out: Float64Array, window: Float64Array) => void {
  const pad = options.center === false ? 0 : Math.floor(options.fftSize / 2);
  const reflect = (options.padMode ?? 'reflect') === 'reflect';
  if (pad > 0 && reflect && samples.length <= pad) throw new RangeError(`reflect padding needs more than ${pad} samples, got ${samples.length}`);
  const last = samples.length - 1;
  return (start, out, window) => {
    const first = start - pad;
    if (first >= 0 && first + out.length <= samples.length) {
      for (let n = 0; n < out.length; n++) out[n] = samples[first + n]! * window[n]!;
      return;
    }
    for (let n = 0; n < out.length; n++) {
      let i = first + n;
      if (reflect) {
        if (i < 0) i = -i;
        else if (i > last) i = 2 * last - i;
      }
      out[n] = i >= 0 && i <= last ? samples[i]! * window[n]! : 0;
    }
  };
}

export function stftFrameCount(sampleCount: number, options: StftOptions): number {
  const length = options.center === false ? sampleCount : sampleCount + 2 * Math.floor(options.fftSize / 2);
  return length < options.fftSize ? 0 : 1 + Math.floor((length - options.fftSize) / options.hopSize);
}

/**
 * Calls `visit` with each frame's spectrum (bins 0..fftSize/2 of re/im are valid; the arrays are reused between calls).
 * Lets long signals be reduced frame by frame (e.g. to mel bands) without holding the complex spectrogram.
 */
export function forEachStftFrame(samples: Float32Array, options: StftOptions, visit: (frame: number, re: Float64Array, im: Float64Array) => void): number {
  const window = fullWindow(options);
  const read = frameReader(samples, options);
  const frames = stftFrameCount(samples.length, options);
  const fft = new Fft(options.fftSize);
  const re = new Float64Array(options.fftSize);
  const im = new Float64Array(options.fftSize);
  for (let t = 0; t < frames; t++) {
    read(t * options.hopSize, re, window);
    im.fill(0);
    fft.forward(re, im);
    visit(t, re, im);
  }
  return frames;
}

export function stft(samples: Float32Array, options: StftOptions): Spectrogram {
  const frames = stftFrameCount(samples.length, options);
  const bins = Math.floor(options.fftSize / 2) + 1;
  const outRe = new Float32Array(frames * bins);
  const outIm = new Float32Array(frames * bins);
  forEachStftFrame(samples, options, (t, re, im) => {
    outRe.set(re.subarray(0, bins), t * bins);
    outIm.set(im.subarray(0, bins), t * bins);
  });
  return { frames, bins, re: outRe, im: outIm };
}

/**
 * Inverse STFT by weighted overlap-add (librosa's `istft`): exact inverse of `stft` with the same options wherever the
 * squared windows overlap to a non-zero sum. `length` trims or zero-pads the output.
 */
export function istft(spectrogram: Spectrogram, options: StftOptions & { length?: number }): Float32Array {
  const { fftSize, hopSize } = options;
  const window = fullWindow(options);
  const { frames, bins } = spectrogram;
  if (bins !== Math.floor(fftSize / 2) + 1) throw new RangeError('spectrogram bins do not match fftSize');
  const fullLength = fftSize + hopSize * (frames - 1);
  const signal = new Float64Array(fullLength);
  const windowSum = new Float64Array(fullLength);
  const fft = new Fft(fftSize);
  const re = new Float64Array(fftSize);
  const im = new Float64Array(fftSize);
  for (let t = 0; t < frames; t++) {
    for (let k = 0; k < bins; k++) {
      re[k] = spectrogram.re[t * bins + k]!;
      im[k] = spectrogram.im[t * bins + k]!;
    }
    // Hermitian symmetry gives the negative frequencies of a real frame.
    for (let k = bins; k < fftSize; k++) {
      re[k] = re[fftSize - k]!;
      im[k] = -im[fftSize - k]!;
    }
    im[0] = 0;
    if (fftSize % 2 === 0) im[fftSize / 2] = 0;
    fft.inverse(re, im);
    const start = t * hopSize;
    for (let n = 0; n < fftSize; n++) {
      signal[start + n] = signal[start + n]! + re[n]! * window[n]!;
      windowSum[start + n] = windowSum[start + n]! + window[n]! * window[n]!;
    }
  }
  for (let i = 0; i < fullLength; i++) if (windowSum[i]! > 1e-10) signal[i] = signal[i]! / windowSum[i]!;
  const offset = options.center === false ? 0 : Math.floor(fftSize / 2);
  const length = options.length ?? fullLength - 2 * offset;
  const out = new Float32Array(length);
  out.set(signal.subarray(offset, Math.min(offset + length, fullLength)));
  return out;
}

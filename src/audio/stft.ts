/**
 * Short-time Fourier transform of any size, window and hop (librosa's framing conventions), its inverse, and the
 * analysis windows. Transforms come from ./fft.ts; everything is computed in float64 and stored in float32.
 */
import { RealFft } from './fft.js';

export { Fft } from './fft.js';

/** Hann window; periodic (the DFT-even form scipy's `get_window('hann', n)` and librosa use) unless `symmetric`. */
export function hannWindow(length: number, symmetric = false): Float64Array {
  const window = new Float64Array(length);
  const denominator = symmetric ? length - 1 : length;
  for (let n = 0; n < length; n++) window[n] = 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / denominator);
  return window;
}

/** Vorbis power-complementary window (w[n]^2 + w[n + length/2]^2 = 1), as used by DeepFilterNet. */
export function vorbisWindow(length: number): Float64Array {
  const window = new Float64Array(length);
  for (let n = 0; n < length; n++) {
    const s = Math.sin((Math.PI * (n + 0.5)) / length);
    window[n] = Math.sin(0.5 * Math.PI * s * s);
  }
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
  if (pad > 0 && reflect && samples.length <= pad)
    throw new RangeError(`reflect padding needs more than ${pad} samples, got ${samples.length}`);
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
export function forEachStftFrame(
  samples: Float32Array,
  options: StftOptions,
  visit: (frame: number, re: Float64Array, im: Float64Array) => void,
): number {
  const window = fullWindow(options);
  const read = frameReader(samples, options);
  const frames = stftFrameCount(samples.length, options);
  const fft = new RealFft(options.fftSize);
  const frame = new Float64Array(options.fftSize);
  const re = new Float64Array(options.fftSize);
  const im = new Float64Array(options.fftSize);
  for (let t = 0; t < frames; t++) {
    read(t * options.hopSize, frame, window);
    fft.forward(frame, re, im);
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
  const fft = new RealFft(fftSize);
  const frame = new Float64Array(fftSize);
  for (let t = 0; t < frames; t++) {
    fft.inverse(spectrogram.re.subarray(t * bins, (t + 1) * bins), spectrogram.im.subarray(t * bins, (t + 1) * bins), frame);
    const start = t * hopSize;
    for (let n = 0; n < fftSize; n++) {
      signal[start + n] = signal[start + n]! + frame[n]! * window[n]!;
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

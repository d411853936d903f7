/** Mel filterbanks and mel spectrograms with librosa's conventions (`librosa.filters.mel`, `feature.melspectrogram`). */
import { forEachStftFrame, stftFrameCount, type StftOptions } from './stft.js';

export interface MelFilterbankOptions {
  sampleRate: number;
  fftSize: number;
  melBands: number;
  /** Default 0. */
  minHz?: number;
  /** Default sampleRate / 2. */
  maxHz?: number;
  /** 'slaney' (librosa's default: linear below 1 kHz, logarithmic above) or 'htk'. */
  scale?: 'slaney' | 'htk';
  /** 'slaney' divides each triangle by its bandwidth (constant energy per band, librosa's default); 'none' keeps peaks at 1. */
  norm?: 'slaney' | 'none';
}

const slaneyLinearHzPerMel = 200 / 3;
const slaneyLogStartHz = 1000;
const slaneyLogStartMel = slaneyLogStartHz / slaneyLinearHzPerMel;
const slaneyLogStep = Math.log(6.4) / 27;

export function hzToMel(hz: number, scale: 'slaney' | 'htk' = 'slaney'): number {
  if (scale === 'htk') return 2595 * Math.log10(1 + hz / 700);
  if (hz < slaneyLogStartHz) return hz / slaneyLinearHzPerMel;
  return slaneyLogStartMel + Math.log(hz / slaneyLogStartHz) / slaneyLogStep;
}

export function melToHz(mel: number, scale: 'slaney' | 'htk' = 'slaney'): number {
  if (scale === 'htk') return 700 * (10 ** (mel / 2595) - 1);
  if (mel < slaneyLogStartMel) return mel * slaneyLinearHzPerMel;
  return slaneyLogStartHz * Math.exp(slaneyLogStep * (mel - slaneyLogStartMel));
}

/** Triangular filters, row-major [melBands, fftSize / 2 + 1]. */
export function melFilterbank(options: MelFilterbankOptions): Float64Array {
  const { sampleRate, fftSize, melBands } = options;
  const scale = options.scale ?? 'slaney';
  const bins = Math.floor(fftSize / 2) + 1;
  const minMel = hzToMel(options.minHz ?? 0, scale);
  const maxMel = hzToMel(options.maxHz ?? sampleRate / 2, scale);
  // melBands + 2 edge frequencies, evenly spaced on the mel scale.
  const edges = Array.from({ length: melBands + 2 }, (_, i) => melToHz(minMel + ((maxMel - minMel) * i) / (melBands + 1), scale));
  const weights = new Float64Array(melBands * bins);
  for (let m = 0; m < melBands; m++) {
    const lower = edges[m]!;
    const centre = edges[m + 1]!;
    const upper = edges[m + 2]!;
    const gain = (options.norm ?? 'slaney') === 'slaney' ? 2 / (upper - lower) : 1;
    for (let k = 0; k < bins; k++) {
      const hz = (k * sampleRate) / fftSize;
      const rising = (hz - lower) / (centre - lower);
      const falling = (upper - hz) / (upper - centre);
      weights[m * bins + k] = Math.max(0, Math.min(rising, falling)) * gain;
    }
  }
  return weights;
}

export type MelSpectrogramOptions = StftOptions & Omit<MelFilterbankOptions, 'fftSize'> & { power?: number };

/** Frame-major mel spectrogram (not log): band b of frame t at t * melBands + b. Memory: the mel bands only. */
export function melSpectrogram(
  samples: Float32Array,
  options: MelSpectrogramOptions,
): { frames: number; melBands: number; data: Float32Array } {
  const filters = melFilterbank(options);
  const bins = Math.floor(options.fftSize / 2) + 1;
  const { melBands } = options;
  const power = options.power ?? 2;
  // Only the bins a filter covers are summed: the filters are sparse.
  const ranges = Array.from({ length: melBands }, (_, m) => {
    let first = 0;
    while (first < bins && filters[m * bins + first] === 0) first++;
    let last = bins - 1;
    while (last > first && filters[m * bins + last] === 0) last--;
    return [first, last] as const;
  });
  const frames = stftFrameCount(samples.length, options);
  const data = new Float32Array(frames * melBands);
  const spectrum = new Float64Array(bins);
  forEachStftFrame(samples, options, (t, re, im) => {
    for (let k = 0; k < bins; k++) {
      const squared = re[k]! * re[k]! + im[k]! * im[k]!;
      spectrum[k] = power === 2 ? squared : squared ** (power / 2);
    }
    for (let m = 0; m < melBands; m++) {
      const [first, last] = ranges[m]!;
      let sum = 0;
      for (let k = first; k <= last; k++) sum += filters[m * bins + k]! * spectrum[k]!;
      data[t * melBands + m] = sum;
    }
  });
  return { frames, melBands, data };
}

/** The mel frames HiFi-GAN V1 (universal) was trained on: 22.05 kHz, 80 bands of 0-8 kHz, 1024-point frames every 256 samples. */
export const vocoderMelOptions = {
  sampleRate: 22050,
  fftSize: 1024,
  hopSize: 256,
  melBands: 80,
  minHz: 0,
  maxHz: 8000,
} as const;
/** Magnitudes are floored here before the log (HiFi-GAN's `dynamic_range_compression`). */
const vocoderMelFloor = 1e-5;

/**
 * Natural-log magnitude mel frames as HiFi-GAN's `mel_spectrogram` computes them (reflect padding of (fftSize - hop) / 2 on
 * each side and no centring, so the frame count is floor(samples / hop) and the vocoder gives back the input's length
 * rounded down to a hop). `samples` at 22.05 kHz; frame-major, band b of frame t at t * 80 + b.
 */
export function vocoderLogMel(samples: Float32Array): { frames: number; melBands: number; data: Float32Array } {
  const { fftSize, hopSize } = vocoderMelOptions;
  const pad = (fftSize - hopSize) / 2;
  if (samples.length <= pad) throw new RangeError(`the vocoder's mel frames need more than ${pad} samples, got ${samples.length}`);
  const padded = new Float32Array(samples.length + 2 * pad);
  padded.set(samples, pad);
  const last = samples.length - 1;
  for (let i = 1; i <= pad; i++) {
    padded[pad - i] = samples[i]!;
    padded[pad + last + i] = samples[last - i]!;
  }
  const mel = melSpectrogram(padded, { ...vocoderMelOptions, center: false, power: 1 });
  for (let i = 0; i < mel.data.length; i++) mel.data[i] = Math.log(Math.max(mel.data[i]!, vocoderMelFloor));
  return mel;
}

/** Whisper's input features: 16 kHz, 80 Slaney bands of 0-8 kHz, 400-point Hann frames every 160 samples (10 ms). */
export const whisperMelOptions = { sampleRate: 16000, fftSize: 400, hopSize: 160, melBands: 80 } as const;

/**
 * Log-mel frames as Whisper's `log_mel_spectrogram` computes them: power spectrum of centred (reflect-padded) frames, the
 * last frame dropped, log10 floored at 1e-10, values below the maximum minus 8 raised to it, then (x + 4) / 4.
 * `samples` at 16 kHz; frame-major, band b of frame t at t * 80 + b; floor(samples / 160) frames.
 */
export function whisperLogMel(samples: Float32Array): { frames: number; melBands: number; data: Float32Array } {
  const mel = melSpectrogram(samples, whisperMelOptions);
  const frames = mel.frames - 1;
  const data = mel.data.subarray(0, frames * mel.melBands);
  let max = -Infinity;
  for (let i = 0; i < data.length; i++) {
    data[i] = Math.log10(Math.max(data[i]!, 1e-10));
    if (data[i]! > max) max = data[i]!;
  }
  for (let i = 0; i < data.length; i++) data[i] = (Math.max(data[i]!, max - 8) + 4) / 4;
  return { frames, melBands: mel.melBands, data: data.slice() };
}

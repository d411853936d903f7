/**
 * Kaldi-style log-mel filterbank features (`compute-fbank-feats`, torchaudio's `compliance.kaldi.fbank`) with the
 * options speaker models trained by 3D-Speaker and WeSpeaker use: 16 kHz input in -1..1, 25 ms frames every 10 ms with
 * edge frames dropped (snip_edges), no dither, DC removed per frame, pre-emphasis 0.97, Povey window, 512-point power
 * spectrum, triangular filters on Kaldi's mel scale (1127 ln(1 + f / 700)), natural log floored at float32 epsilon.
 */
import { RealFft } from './fft.js';

export interface FbankOptions {
  /** Default 16000. */
  sampleRate?: number;
  /** Default 80. */
  melBins?: number;
  /** Default 20 Hz. */
  lowHz?: number;
  /** Default the Nyquist frequency. */
  highHz?: number;
}

export interface Fbank {
  frames: number;
  melBins: number;
  /** Row-major [frames, melBins]. */
  data: Float32Array;
}

const frameSeconds = 0.025;
const shiftSeconds = 0.01;
const preemphasis = 0.97;
const poveyExponent = 0.85;
const float32Epsilon = 1.1920928955078125e-7;

const kaldiMel = (hz: number): number => 1127 * Math.log(1 + hz / 700);

export function fbankFrameCount(sampleCount: number, sampleRate = 16000): number {
  const frameLength = Math.round(frameSeconds * sampleRate);
  const shift = Math.round(shiftSeconds * sampleRate);
  return sampleCount < frameLength ? 0 : 1 + Math.floor((sampleCount - frameLength) / shift);
}

/** Triangular filters, row-major [melBins, fftSize / 2] (Kaldi leaves out the Nyquist bin). */
function kaldiFilterbank(sampleRate: number, fftSize: number, melBins: number, lowHz: number, highHz: number): Float64Array {
  const fftBins = fftSize / 2;
  const binHz = sampleRate / fftSize;
  const lowMel = kaldiMel(lowHz);
  const melStep = (kaldiMel(highHz) - lowMel) / (melBins + 1);
  const weights = new Float64Array(melBins * fftBins);
  for (let m = 0; m < melBins; m++) {
    const left = lowMel + m * melStep;
    const centre = left + melStep;
    const right = centre + melStep;
    for (let k = 0; k < fftBins; k++) {
      const mel = kaldiMel(binHz * k);
      if (mel <= left || mel >= right) continue;
      weights[m * fftBins + k] = mel <= centre ? (mel - left) / (centre - left) : (right - mel) / (right - centre);
    }
  }
  return weights;
}

export function fbank(samples: Float32Array, options: FbankOptions = {}): Fbank {
  const sampleRate = options.sampleRate ?? 16000;
  const melBins = options.melBins ?? 80;
  const frameLength = Math.round(frameSeconds * sampleRate);
  const shift = Math.round(shiftSeconds * sampleRate);
  let fftSize = 1;
  while (fftSize < frameLength) fftSize *= 2;
  const fftBins = fftSize / 2;
  const filters = kaldiFilterbank(sampleRate, fftSize, melBins, options.lowHz ?? 20, options.highHz ?? sampleRate / 2);
  const window = Float64Array.from(
    { length: frameLength },
    (_, i) => (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (frameLength - 1))) ** poveyExponent,
  );
  const fft = new RealFft(fftSize);
  const frame = new Float64Array(fftSize);
  const re = new Float64Array(fft.bins);
  const im = new Float64Array(fft.bins);
  const power = new Float64Array(fftBins);

  const frames = fbankFrameCount(samples.length, sampleRate);
  const data = new Float32Array(frames * melBins);
  for (let t = 0; t < frames; t++) {
    const start = t * shift;
    let mean = 0;
    for (let i = 0; i < frameLength; i++) mean += samples[start + i]!;
    mean /= frameLength;
    for (let i = 0; i < frameLength; i++) frame[i] = samples[start + i]! - mean;
    for (let i = frameLength - 1; i > 0; i--) frame[i] = frame[i]! - preemphasis * frame[i - 1]!;
    frame[0] = frame[0]! * (1 - preemphasis);
    for (let i = 0; i < frameLength; i++) frame[i] = frame[i]! * window[i]!;
    frame.fill(0, frameLength);
    fft.forward(frame, re, im);
    for (let k = 0; k < fftBins; k++) power[k] = re[k]! * re[k]! + im[k]! * im[k]!;
    for (let m = 0; m < melBins; m++) {
      let energy = 0;
      const row = m * fftBins;
      for (let k = 0; k < fftBins; k++) energy += filters[row + k]! * power[k]!;
      data[t * melBins + m] = Math.log(Math.max(energy, float32Epsilon));
    }
  }
  return { frames, melBins, data };
}

/** Subtracts each bin's mean over all frames, in place (cepstral mean normalisation without variance normalisation). */
export function subtractBinMeans(features: Fbank): Fbank {
  const { frames, melBins, data } = features;
  if (frames === 0) return features;
  for (let m = 0; m < melBins; m++) {
    let sum = 0;
    for (let t = 0; t < frames; t++) sum += data[t * melBins + m]!;
    const mean = sum / frames;
    for (let t = 0; t < frames; t++) data[t * melBins + m] = data[t * melBins + m]! - mean;
  }
  return features;
}

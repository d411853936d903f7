/**
 * DeepFilterNet3 (Schröter et al. 2023) on onnxruntime-node: 48 kHz, 960-point STFT, hop 480, three graphs
 * (enc, erb_dec, df_dec) with the host-side feature code of libDF: ERB band energies in dB with exponential mean
 * normalisation, and the lowest DF bins unit-normalised. The decoders give 32 ERB gains per frame (applied to the
 * whole spectrum) and a 5-tap complex deep filter for the lowest 96 bins (applied to the noisy spectrum).
 * The exported graphs have a free time axis and no exposed recurrent state, so the separator runs them on chunks
 * with context on both sides; memory is then flat in duration.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { istft, stft, vorbisWindow, type Spectrogram, type StftOptions } from '../../../audio/stft.js';
import { WorkerSession } from '../../../models/onnx-worker.js';
import type { DialogueModel } from './dialogue-model.js';

export interface DeepFilterConfig {
  sampleRate: number;
  fftSize: number;
  hopSize: number;
  nbErb: number;
  nbDf: number;
  dfOrder: number;
  dfLookahead: number;
  convLookahead: number;
  minNbErbFreqs: number;
  normTauSeconds: number;
}

/** Reads the [df] and [deepfilternet] sections of the model's config.ini. */
export function parseDeepFilterConfig(text: string): DeepFilterConfig {
  const sections = new Map<string, Map<string, string>>();
  let current = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      current = new Map();
      sections.set(header[1]!, current);
    } else if (line.includes('=')) {
      const at = line.indexOf('=');
      current.set(line.slice(0, at).trim(), line.slice(at + 1).trim());
    }
  }
  const num = (section: string, key: string): number => {
    const value = Number(sections.get(section)?.get(key));
    if (!Number.isFinite(value)) throw new Error(`DeepFilterNet config.ini: missing [${section}] ${key}`);
    return value;
  };
  return {
    sampleRate: num('df', 'sr'),
    fftSize: num('df', 'fft_size'),
    hopSize: num('df', 'hop_size'),
    nbErb: num('df', 'nb_erb'),
    nbDf: num('df', 'nb_df'),
    dfOrder: num('df', 'df_order'),
    dfLookahead: num('df', 'df_lookahead'),
    convLookahead: num('deepfilternet', 'conv_lookahead'),
    minNbErbFreqs: num('df', 'min_nb_erb_freqs'),
    normTauSeconds: num('df', 'norm_tau'),
  };
}

const freqToErb = (hz: number): number => 9.265 * Math.log1p(hz / (24.7 * 9.265));
const erbToFreq = (erb: number): number => 24.7 * 9.265 * (Math.exp(erb / 9.265) - 1);

/** Widths in bins of the ERB bands (libDF erb_fb): equal steps on the ERB scale, at least `minBins` each. */
export function erbBandWidths(sampleRate: number, fftSize: number, bands: number, minBins: number): number[] {
  const binHz = sampleRate / fftSize;
  const low = freqToErb(0);
  const step = (freqToErb(sampleRate / 2) - low) / bands;
  const widths: number[] = [];
  let previous = 0;
  let over = 0;
  for (let i = 1; i <= bands; i++) {
    const edge = Math.round(erbToFreq(low + i * step) / binHz);
    let width = edge - previous - over;
    if (width < minBins) {
      over = minBins - width;
      width = minBins;
    } else over = 0;
    widths.push(width);
    previous = edge;
  }
  widths[bands - 1]! += 1;
  const excess = widths.reduce((a, b) => a + b, 0) - (fftSize / 2 + 1);
  if (excess > 0) widths[bands - 1]! -= excess;
  return widths;
}

const meanNormInitDb: [number, number] = [-60, -90];
const unitNormInit: [number, number] = [0.001, 0.0001];

function linspace(a: number, b: number, n: number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = n === 1 ? a : a + ((b - a) * i) / (n - 1);
  return out;
}

export class DeepFilterNet3Model implements DialogueModel {
  readonly id = 'deepfilternet3';
  readonly sampleRate: number;
  private readonly widths: number[];
  /** libDF's framing: centred, zero padded, Vorbis window. */
  private readonly stftOptions: StftOptions;
  /** exp(-hop / sr / tau), rounded to 2 decimals as libDF does. */
  private readonly alpha: number;

  private constructor(
    private readonly config: DeepFilterConfig,
    private readonly encoder: WorkerSession,
    private readonly erbDecoder: WorkerSession,
    private readonly dfDecoder: WorkerSession,
  ) {
    this.sampleRate = config.sampleRate;
    this.widths = erbBandWidths(config.sampleRate, config.fftSize, config.nbErb, config.minNbErbFreqs);
    this.stftOptions = { fftSize: config.fftSize, hopSize: config.hopSize, window: vorbisWindow(config.fftSize), padMode: 'constant' };
    this.alpha = Math.round(Math.exp(-config.hopSize / config.sampleRate / config.normTauSeconds) * 100) / 100;
  }

  static async load(modelDir: string, threads = 2): Promise<DeepFilterNet3Model> {
    const config = parseDeepFilterConfig(await readFile(path.join(modelDir, 'config.ini'), 'utf8'));
    // No arena: chunk-sized activations are freed after each run instead of being kept at their peak.
    const options: ort.InferenceSession.SessionOptions = {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      enableCpuMemArena: false,
    };
    const [encoder, erbDecoder, dfDecoder] = await Promise.all(
      ['enc.onnx', 'erb_dec.onnx', 'df_dec.onnx'].map((file) =>
        WorkerSession.create(`DeepFilterNet3 ${file}`, path.join(modelDir, file), options),
      ),
    );
    return new DeepFilterNet3Model(config, encoder!, erbDecoder!, dfDecoder!);
  }

  async close(): Promise<void> {
    await Promise.all([this.encoder.close(), this.erbDecoder.close(), this.dfDecoder.close()]);
  }

  async enhance(samples: Float32Array, signal?: AbortSignal): Promise<Float32Array> {
    const { fftSize, hopSize, nbErb, nbDf, dfOrder, dfLookahead, convLookahead } = this.config;
    // libDF's analysis scale: the unnormalised inverse FFT then restores the amplitude.
    const scale = (2 * hopSize) / (fftSize * fftSize);
    const spec = stft(samples, this.stftOptions);
    const { frames, bins } = spec;
    for (let i = 0; i < spec.re.length; i++) {
      spec.re[i]! *= scale;
      spec.im[i]! *= scale;
    }
    const [featErb, featSpec] = this.features(spec, convLookahead);
    if (signal?.aborted) throw signal.reason;

    const encoded = await this.encoder.run({
      feat_erb: new ort.Tensor('float32', featErb, [1, 1, frames, nbErb]),
      feat_spec: new ort.Tensor('float32', featSpec, [1, 2, frames, nbDf]),
    });
    const [erbOut, dfOut] = await Promise.all([
      this.erbDecoder.run({ emb: encoded.emb!, e3: encoded.e3!, e2: encoded.e2!, e1: encoded.e1!, e0: encoded.e0! }),
      this.dfDecoder.run({ emb: encoded.emb!, c0: encoded.c0! }),
    ]);
    const gains = erbOut.m!.data as Float32Array;
    const coefs = dfOut.coefs!.data as Float32Array;
    if (signal?.aborted) throw signal.reason;

    const re = new Float32Array(spec.re.length);
    const im = new Float32Array(spec.im.length);
    for (let t = 0; t < frames; t++) {
      let bin = 0;
      for (let b = 0; b < nbErb; b++) {
        const g = gains[t * nbErb + b]!;
        for (let k = 0; k < this.widths[b]!; k++, bin++) {
          re[t * bins + bin] = spec.re[t * bins + bin]! * g;
          im[t * bins + bin] = spec.im[t * bins + bin]! * g;
        }
      }
      // Deep filter over frames t-(order-1-lookahead) .. t+lookahead of the unmasked spectrum.
      for (let f = 0; f < nbDf; f++) {
        let accRe = 0;
        let accIm = 0;
        for (let n = 0; n < dfOrder; n++) {
          const source = t + n - (dfOrder - 1 - dfLookahead);
          if (source < 0 || source >= frames) continue;
          const c = ((t * nbDf + f) * dfOrder + n) * 2;
          const cr = coefs[c]!;
          const ci = coefs[c + 1]!;
          const xr = spec.re[source * bins + f]!;
          const xi = spec.im[source * bins + f]!;
          accRe += xr * cr - xi * ci;
          accIm += xr * ci + xi * cr;
        }
        re[t * bins + f] = accRe;
        im[t * bins + f] = accIm;
      }
    }
    const out = istft({ ...spec, re, im } satisfies Spectrogram, { ...this.stftOptions, length: samples.length });
    for (let i = 0; i < out.length; i++) out[i]! /= scale;
    return out;
  }

  /** feat_erb [frames, nbErb] and feat_spec [2, frames, nbDf], shifted `lookahead` frames earlier (zero-padded). */
  private features(spec: Spectrogram, lookahead: number): [Float32Array, Float32Array] {
    const { frames, bins } = spec;
    const { nbErb, nbDf } = this.config;
    const alpha = this.alpha;
    const featErb = new Float32Array(frames * nbErb);
    const featSpec = new Float32Array(2 * frames * nbDf);
    const meanState = linspace(meanNormInitDb[0], meanNormInitDb[1], nbErb);
    const unitState = linspace(unitNormInit[0], unitNormInit[1], nbDf);
    for (let t = 0; t < frames; t++) {
      const target = t - lookahead;
      let bin = 0;
      for (let b = 0; b < nbErb; b++) {
        let power = 0;
        const width = this.widths[b]!;
        for (let k = 0; k < width; k++, bin++) {
          const r = spec.re[t * bins + bin]!;
          const i = spec.im[t * bins + bin]!;
          power += r * r + i * i;
        }
        const db = 10 * Math.log10(power / width + 1e-10);
        meanState[b] = db * (1 - alpha) + meanState[b]! * alpha;
        if (target >= 0) featErb[target * nbErb + b] = (db - meanState[b]!) / 40;
      }
      for (let f = 0; f < nbDf; f++) {
        const r = spec.re[t * bins + f]!;
        const i = spec.im[t * bins + f]!;
        unitState[f] = Math.hypot(r, i) * (1 - alpha) + unitState[f]! * alpha;
        const norm = Math.sqrt(unitState[f]!);
        if (target >= 0) {
          featSpec[target * nbDf + f] = r / norm;
          featSpec[(frames + target) * nbDf + f] = i / norm;
        }
      }
    }
    return [featErb, featSpec];
  }
}

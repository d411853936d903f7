/**
 * kNN voice conversion (issue 36; after Baas et al., "Voice Conversion With Just Nearest Neighbors", 2023) rendered with
 * the WORLD vocoder: every 20 ms source frame takes the mean spectral envelope of the `neighbours` target frames nearest
 * to it in a content feature space (Whisper base's encoder after its first blocks, content-encoder.ts; cosine), so the
 * timbre comes from the target's own frames of the same sound. WORLD resynthesises with the source's voicing,
 * aperiodicity (voiced frames scaled by 0.3, as world-dsp does, for a clean excitation), frame energies, and F0 moved into
 * the target's register: prosody and length are the source's by construction. HiFi-GAN would render matched mels too,
 * but it runs at RTF 2.9 here (bench/results/vocoder.json).
 *
 * The target's frames (content features, envelopes as cepstra at 20 ms) are computed once from a profile's clips and
 * kept with it. F0 mapping as world-dsp: log f0' = m_target + (log f0 - m_source), times s_target / s_source (clamped
 * to 0.5..1.5) when preserveEmotion is false; energy dynamics stay the source's either way.
 *
 * Opt-in (VOXD_VC_ENGINE=knn): it moves identity far (CAM++) but loses the words when the target has only seconds of
 * speech, as kNN-VC does with little reference audio (bench/results/vc.json, conditions.knn). One male LibriSpeech clip
 * (2033) converted, whisper base WER against the source's transcript: to itself (target = the source clip) 0.09 (the
 * rendering is sound); to another 6 s clip of the same reader 0.91 with 4 neighbours, 0.64 with 1; to a female reader
 * (3080, one 7.8 s clip; CAM++ to her other clip, source 0.12): 4 neighbours 0.27 / WER 1.00 (output to source 0.23),
 * 1 neighbour 0.37 / 1.09, the output envelope 60% matched and 40% the source's own: 0.22 / 0.36 (output to source 0.40).
 * Content features after block 3 instead of 4 (4 neighbours): WER 1.18 on both targets; to 3080 CAM++ 0.23, output to
 * source 0.26.
 */
import { bandBins, CepstralSmoother } from '../../../audio/envelope.js';
import { resample } from '../../../audio/resample.js';
import { frameCount, peak, toMono, type Waveform } from '../../../audio/waveform.js';
import type { World, WorldAnalysis, WorldOptions } from '../../../audio/world.js';
import { VoxError } from '../../../core/errors.js';
import { type ContentEncoder, type ContentFeatures, contentHopSamples } from '../content-encoder.js';
import type { ConversionResult, ConvertOptions, TargetProfileStats, VoiceConverter } from '../voice-converter.js';
import {
  addSourceHighBand,
  addWithCrossfade,
  chunkPadSamples,
  PearsonAccumulator,
  planChunks,
  robust,
  speakerF0Range,
} from './world-dsp.js';

const sampleRate = 16000;
const framePeriodMs = 5;
const hop = (sampleRate * framePeriodMs) / 1000;
const fftSize = 1024;
const bins = fftSize / 2 + 1;
/** WORLD frames per content frame. */
const framesPerContent = contentHopSamples / hop;
/** Cepstral coefficients kept per target envelope (formants and tilt; the harmonics come from the F0). */
const quefrencies = 80;
const neighbours = 4;
const voicedAperiodicityScale = 0.3;
const profileVersion = 1;

export interface KnnOptions {
  /** Harvest for F0 (default) or false for DIO + StoneMask (faster, more voicing errors). */
  harvest?: boolean;
  /** Nearest target frames averaged per source frame (default 4). */
  neighbours?: number;
}

interface Target {
  frames: number;
  dims: number;
  /** Unit-length content rows. */
  content: Float32Array;
  /** Cepstra of the log envelopes, `quefrencies` per content frame. */
  cepstra: Float32Array;
  logF0Median: number;
  logF0Spread: number;
}

export class KnnConverter implements VoiceConverter {
  readonly engine = 'knn';
  readonly modelId: string;
  private readonly worldOptions: WorldOptions;
  private readonly smoother = new CepstralSmoother(bins, quefrencies);
  private readonly band = bandBins(sampleRate, fftSize, 80, 7600);
  private readonly neighbours: number;

  constructor(
    private readonly world: World,
    private readonly encoder: ContentEncoder,
    encoderModelId: string,
    options: KnnOptions = {},
  ) {
    this.modelId = `knn-world-${encoderModelId}`;
    this.neighbours = options.neighbours ?? neighbours;
    this.worldOptions = { sampleRate, framePeriodMs, fftSize, f0FloorHz: 60, f0CeilHz: 700, harvest: options.harvest ?? true };
  }

  async analyseTarget(clips: Waveform[], signal?: AbortSignal): Promise<TargetProfileStats> {
    if (clips.length === 0) throw new VoxError('invalid_request', 'A voice profile needs at least one reference clip.');
    const contents: Float32Array[] = [];
    const cepstra: Float32Array[] = [];
    const logF0: number[] = [];
    let dims = 0;
    let frames = 0;
    for (const clip of clips) {
      const samples = (await to16k(clip, signal)).samples;
      const content = await this.encoder.features(samples);
      signal?.throwIfAborted();
      dims = content.dims;
      const clipCepstra = new Float32Array(content.frames * quefrencies);
      const sums = new Float64Array(content.frames * bins);
      const counts = new Uint16Array(content.frames);
      await this.forEachChunk(samples, signal, async (analysis, regionStart, from, to) => {
        for (let t = from; t < to; t++) {
          const f0 = analysis.f0[t]!;
          if (f0 > 0) logF0.push(Math.log(f0));
          const c = Math.min(content.frames - 1, Math.floor((regionStart / hop + t) / framesPerContent));
          for (let k = 0; k < bins; k++) sums[c * bins + k] = sums[c * bins + k]! + Math.log(analysis.spectrogram[t * bins + k]! + 1e-16);
          counts[c] = counts[c]! + 1;
        }
      });
      const log = new Float64Array(bins);
      for (let c = 0; c < content.frames; c++) {
        for (let k = 0; k < bins; k++) log[k] = sums[c * bins + k]! / Math.max(1, counts[c]!);
        this.smoother.analyse(log, clipCepstra.subarray(c * quefrencies, (c + 1) * quefrencies));
      }
      contents.push(content.data);
      cepstra.push(clipCepstra);
      frames += content.frames;
    }
    if (logF0.length < 100) {
      throw new VoxError('invalid_request', 'Too little voiced speech to analyse (need at least about half a second).', { param: 'audio' });
    }
    const [logF0Median, logF0Spread] = robust(logF0);
    return {
      engine: this.engine,
      version: profileVersion,
      speechSeconds: (logF0.length * framePeriodMs) / 1000,
      meta: { frames, dims, logF0Median, logF0Spread: Math.max(logF0Spread, 0.02), medianF0Hz: Math.exp(logF0Median) },
      blobs: { content: concat(contents), cepstra: concat(cepstra) },
    };
  }

  async convert(input: Waveform, profile: TargetProfileStats, options: ConvertOptions): Promise<ConversionResult> {
    const { signal } = options;
    const target = targetOf(profile);
    const warnings: string[] = [];
    const samples = (await to16k(input, signal)).samples;
    const content = await this.encoder.features(samples);
    signal?.throwIfAborted();
    if (content.dims !== target.dims) {
      throw new VoxError('unsupported_value', 'This voice profile was analysed with another content encoder; re-create it.');
    }
    const matched = this.match(content, target);

    // The source's register from a quick DIO pass over the whole input (the chunks' Harvest tracks come later).
    const wide = await this.world.f0(samples, { ...this.worldOptions, harvest: false });
    const voicedLogF0 = Array.from(
      wide.filter((v) => v > 0),
      Math.log,
    );
    if (voicedLogF0.length < 20) {
      throw new VoxError('invalid_request', 'Too little voiced speech to convert (need at least about half a second).', { param: 'audio' });
    }
    const [sourceMedian, sourceSpreadRaw] = robust(voicedLogF0);
    const sourceSpread = Math.max(sourceSpreadRaw, 0.02);
    const f0Scale = options.preserveEmotion ? 1 : clamp(target.logF0Spread / sourceSpread, 0.5, 1.5);

    const output = new Float32Array(samples.length);
    const correlation = new PearsonAccumulator();
    const chunks = planChunks(samples);
    const log = new Float64Array(bins);
    const cepstrum = new Float64Array(quefrencies);
    for (const [c, chunk] of chunks.entries()) {
      const regionStart = Math.max(0, chunk.start - chunkPadSamples);
      const region = samples.subarray(regionStart, Math.min(samples.length, chunk.end + chunkPadSamples));
      const analysis = await this.analyse(region);
      signal?.throwIfAborted();
      const count = analysis.f0.length;
      const f0 = new Float64Array(count);
      const spectrogram = new Float64Array(count * bins);
      const aperiodicity = Float64Array.from(analysis.aperiodicity);
      for (let t = 0; t < count; t++) {
        const voiced = analysis.f0[t]! > 0;
        if (voiced) {
          f0[t] = clamp(Math.exp(target.logF0Median + (Math.log(analysis.f0[t]!) - sourceMedian) * f0Scale), 40, 800);
          for (let k = 0; k < bins; k++) aperiodicity[t * bins + k] = aperiodicity[t * bins + k]! * voicedAperiodicityScale;
        }
        // The matched envelope, interpolated between the content frames around this WORLD frame.
        const position = clamp(((regionStart / hop + t) * hop - contentHopSamples / 4) / contentHopSamples, 0, content.frames - 1);
        const before = Math.floor(position);
        const after = Math.min(content.frames - 1, before + 1);
        const w = position - before;
        for (let q = 0; q < quefrencies; q++) {
          cepstrum[q] = (1 - w) * matched[before * quefrencies + q]! + w * matched[after * quefrencies + q]!;
        }
        this.smoother.synthesise(cepstrum, log);
        // The source frame's energy over 80-7600 Hz (its dynamics kept).
        let sourceBand = 1e-16;
        let matchedBand = 1e-16;
        for (let k = this.band.first; k < this.band.last; k++) {
          sourceBand += analysis.spectrogram[t * bins + k]!;
          matchedBand += Math.exp(log[k]!);
        }
        const gain = Math.log(sourceBand) - Math.log(matchedBand);
        for (let k = 0; k < bins; k++) spectrogram[t * bins + k] = Math.exp(log[k]! + gain);
      }
      const synthesised = await this.world.synthesise({ f0, spectrogram, aperiodicity }, region.length, this.worldOptions);
      signal?.throwIfAborted();
      addWithCrossfade(output, synthesised, regionStart, chunk, c === 0, c === chunks.length - 1);
      // Intonation kept? The output's F0 (quick DIO) against the source's over this chunk's own frames.
      const outputF0 = await this.world.f0(synthesised, {
        ...this.worldOptions,
        ...(await speakerF0Range(this.world, synthesised, this.worldOptions)),
        harvest: false,
      });
      const from = (chunk.start - regionStart) / hop;
      const to = Math.min(outputF0.length, count, (chunk.end - regionStart) / hop);
      for (let t = from; t < to; t++) {
        if (outputF0[t]! > 0 && analysis.f0[t]! > 0) correlation.add(Math.log(analysis.f0[t]!), Math.log(outputF0[t]!));
      }
    }

    const atInputRate = await resample({ samples: output, sampleRate, channels: 1 }, input.sampleRate, signal);
    const exact = new Float32Array(frameCount(input));
    exact.set(atInputRate.samples.subarray(0, exact.length));
    if (input.sampleRate > sampleRate) await addSourceHighBand(exact, input, { samples, sampleRate, channels: 1 }, signal);
    const outputPeak = peak(exact);
    if (outputPeak > 0.99) for (let i = 0; i < exact.length; i++) exact[i] = (exact[i]! * 0.99) / outputPeak;
    if (input.channels > 1) warnings.push('The converted voice is mono: the input channels were mixed down.');
    return { waveform: { samples: exact, sampleRate: input.sampleRate, channels: 1 }, f0Correlation: correlation.value(), warnings };
  }

  close(): Promise<void> {
    return this.encoder.close();
  }

  /** Per source content frame, the mean cepstrum of its nearest target frames (cosine of content features). */
  private match(source: ContentFeatures, target: Target): Float32Array {
    const { dims } = target;
    const k = Math.min(this.neighbours, target.frames);
    const rows = unitRows(source.data, dims);
    const out = new Float32Array(source.frames * quefrencies);
    const best = new Int32Array(k);
    const bestScores = new Float64Array(k);
    for (let s = 0; s < source.frames; s++) {
      best.fill(-1);
      bestScores.fill(-Infinity);
      const offset = s * dims;
      for (let t = 0; t < target.frames; t++) {
        let dot = 0;
        const base = t * dims;
        for (let d = 0; d < dims; d++) dot += rows[offset + d]! * target.content[base + d]!;
        if (dot <= bestScores[k - 1]!) continue;
        let i = k - 1;
        while (i > 0 && bestScores[i - 1]! < dot) {
          bestScores[i] = bestScores[i - 1]!;
          best[i] = best[i - 1]!;
          i--;
        }
        bestScores[i] = dot;
        best[i] = t;
      }
      for (let j = 0; j < k; j++) {
        const from = best[j]! * quefrencies;
        for (let q = 0; q < quefrencies; q++) out[s * quefrencies + q] = out[s * quefrencies + q]! + target.cepstra[from + q]! / k;
      }
    }
    return out;
  }

  /** WORLD analysis with the F0 search range fitted to the speaker. */
  private async analyse(samples: Float32Array): Promise<WorldAnalysis> {
    const range = await speakerF0Range(this.world, samples, this.worldOptions);
    return this.world.analyse(samples, { ...this.worldOptions, ...range });
  }

  /** WORLD analysis over chunks of a 16 kHz signal; `visit` gets each region's analysis and the chunk's own frames [from, to). */
  private async forEachChunk(
    samples: Float32Array,
    signal: AbortSignal | undefined,
    visit: (analysis: WorldAnalysis, regionStart: number, from: number, to: number) => Promise<void>,
  ): Promise<void> {
    for (const chunk of planChunks(samples)) {
      const regionStart = Math.max(0, chunk.start - chunkPadSamples);
      const analysis = await this.analyse(samples.subarray(regionStart, Math.min(samples.length, chunk.end + chunkPadSamples)));
      signal?.throwIfAborted();
      await visit(analysis, regionStart, (chunk.start - regionStart) / hop, Math.min(analysis.f0.length, (chunk.end - regionStart) / hop));
    }
  }
}

function targetOf(profile: TargetProfileStats): Target {
  if (profile.engine !== 'knn' || profile.version !== profileVersion) {
    throw new VoxError(
      'unsupported_value',
      `This voice profile was analysed for ${profile.engine} v${profile.version}; re-create it for knn v${profileVersion}.`,
    );
  }
  const { content, cepstra } = profile.blobs;
  const frames = Number(profile.meta.frames);
  const dims = Number(profile.meta.dims);
  if (!content || !cepstra || content.length !== frames * dims || cepstra.length !== frames * quefrencies) {
    throw new VoxError('internal', 'Voice profile statistics lack the knn target frames.');
  }
  return {
    frames,
    dims,
    content: unitRows(content, dims),
    cepstra,
    logF0Median: Number(profile.meta.logF0Median),
    logF0Spread: Number(profile.meta.logF0Spread),
  };
}

function unitRows(data: Float32Array, dims: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let offset = 0; offset < data.length; offset += dims) {
    let norm = 1e-12;
    for (let d = 0; d < dims; d++) norm += data[offset + d]! * data[offset + d]!;
    const scale = 1 / Math.sqrt(norm);
    for (let d = 0; d < dims; d++) out[offset + d] = data[offset + d]! * scale;
  }
  return out;
}

function concat(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

async function to16k(waveform: Waveform, signal?: AbortSignal): Promise<Waveform> {
  return resample(toMono(waveform), sampleRate, signal);
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}

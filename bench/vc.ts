/**
 * Voice-conversion benchmark over ../shared/eval/vc: every speaker with two or more clips is a target (profile from
 * its first clip, judged against its held-out other clips); every other speaker's first clip is a source.
 * Writes bench/results/vc.json.
 *
 * Per pair: Resemblyzer cosine of output and source to the held-out target clip, and of output to the source; F0
 * contour correlation with the source (Harvest on both, log-F0, frames voiced in both); exact duration; RTF.
 * Words: with `--wer`, whisper base (the transcription engine) transcribes source and output, and the output's WER
 * against the source's transcript is reported (the `transcribe` hook of `runVcBench`); without it, `wer` is null.
 *
 * Run: VOXD_SHARED_DIR=/work/shared node --import tsx bench/vc.ts [--wer] [--limit N] [--every N] [--dio] [--out FILE]
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { decodeFile } from '../src/audio/decode.js';
import { World } from '../src/audio/world.js';
import type { Waveform } from '../src/audio/waveform.js';
import { speakerF0Range, WorldDspConverter } from '../src/operations/convert/engines/world-dsp.js';
import { averageEmbedding, cosineSimilarity, SpeakerEncoder } from '../src/speakers/embedding.js';
import { errorRate } from './lib/wer.js';
import { WhisperCppTranscriber } from '../src/operations/transcribe/engines/whisper-cpp.js';
import { ge2eModelPath, modelFile } from '../test/helpers/models.js';
import { repoRoot, sharedDir, worldAddon } from '../test/helpers/vc-assets.js';

interface Clip {
  id: string;
  audio: string;
  speaker: string;
  gender: 'M' | 'F' | null;
}

interface PairResult {
  source: string;
  sourceGender: string | null;
  target: string;
  targetGender: string | null;
  similarityOutputToTarget: number;
  similaritySourceToTarget: number;
  similarityOutputToSource: number;
  f0Correlation: number;
  engineF0Correlation: number;
  sameDuration: boolean;
  /** Wall-clock seconds per second of audio (depends on the machine's other load). */
  rtf: number;
  /** CPU seconds (all of this process's threads) per second of audio: an idle single core's RTF. */
  cpuRtf: number;
  wer: { source: string; output: string; wer: number } | null;
  warnings: string[];
}

/** Hook for the ASR engine: a transcript of a waveform (16 kHz mono is fine). */
export type Transcribe = (waveform: Waveform) => Promise<string>;

export interface VcBenchOptions {
  limit?: number;
  /** Only every n-th pair (a spread-out subset for quick iterations). */
  every?: number;
  harvest?: boolean;
  transcribe?: Transcribe;
}

export async function runVcBench(options: VcBenchOptions = {}) {
  const manifest = JSON.parse(await readFile(path.join(sharedDir, 'eval', 'manifest.json'), 'utf8')) as { vc: Clip[] };
  const bySpeaker = new Map<string, Clip[]>();
  for (const clip of manifest.vc) bySpeaker.set(clip.speaker, [...(bySpeaker.get(clip.speaker) ?? []), clip]);
  const world = World.load(await worldAddon());
  const encoder = await SpeakerEncoder.load(await ge2eModelPath(), { threads: 2 });
  const converter = new WorldDspConverter(world, encoder, { harvest: options.harvest ?? true });
  const load = (clip: Clip) => decodeFile(path.join(sharedDir, 'eval', clip.audio), { sampleRate: 16000, channels: 1 });
  const cache = new Map<string, Float32Array>();
  const embed = async (clip: Clip) => {
    if (!cache.has(clip.id)) cache.set(clip.id, await encoder.embedUtterance(await load(clip)));
    return cache.get(clip.id)!;
  };

  const pairs: PairResult[] = [];
  let pairIndex = 0;
  for (const [targetSpeaker, clips] of bySpeaker) {
    if (clips.length < 2) continue;
    const [reference, ...heldOut] = clips as [Clip, ...Clip[]];
    const profile = await converter.analyseTarget([await load(reference)]);
    const heldOutEmbeddings = await Promise.all(heldOut.map(embed));
    const targetEmbedding = averageEmbedding(heldOutEmbeddings);
    for (const [sourceSpeaker, sourceClips] of bySpeaker) {
      if (sourceSpeaker === targetSpeaker) continue;
      if (options.every && pairIndex++ % options.every !== 0) continue;
      const sourceClip = sourceClips[0]!;
      const source = await decodeFile(path.join(sharedDir, 'eval', sourceClip.audio), { channels: 1 });
      const started = performance.now();
      const cpuBefore = process.cpuUsage();
      const result = await converter.convert(source, profile, { preserveEmotion: true });
      const seconds = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      const cpuSeconds = (cpu.user + cpu.system) / 1e6;
      const output16k = await decodeLike(result.waveform);
      const source16k = await load(sourceClip);
      const outputEmbedding = await encoder.embedUtterance(output16k);
      const sourceEmbedding = await embed(sourceClip);
      const f0Correlation = await harvestCorrelation(world, source16k.samples, output16k.samples);
      let wer: { source: string; output: string; wer: number } | null = null;
      if (options.transcribe) {
        const [a, b] = [await options.transcribe(source16k), await options.transcribe(output16k)];
        wer = { source: a, output: b, wer: errorRate(a, b, 'en').rate };
      }
      const pair: PairResult = {
        source: sourceClip.id,
        sourceGender: sourceClip.gender,
        target: targetSpeaker,
        targetGender: reference.gender,
        similarityOutputToTarget: cosineSimilarity(outputEmbedding, targetEmbedding),
        similaritySourceToTarget: cosineSimilarity(sourceEmbedding, targetEmbedding),
        similarityOutputToSource: cosineSimilarity(outputEmbedding, sourceEmbedding),
        f0Correlation,
        engineF0Correlation: result.f0Correlation,
        sameDuration: result.waveform.samples.length === source.samples.length && result.waveform.sampleRate === source.sampleRate,
        rtf: seconds / (source.samples.length / source.sampleRate),
        cpuRtf: cpuSeconds / (source.samples.length / source.sampleRate),
        wer,
        warnings: result.warnings,
      };
      pairs.push(pair);
      process.stderr.write(
        `${pair.source} -> ${pair.target}: out->target ${pair.similarityOutputToTarget.toFixed(3)} (source ${pair.similaritySourceToTarget.toFixed(3)}), out->source ${pair.similarityOutputToSource.toFixed(3)}, f0 r ${f0Correlation.toFixed(3)}, rtf ${pair.rtf.toFixed(3)} (cpu ${pair.cpuRtf.toFixed(3)})${wer ? `, wer ${wer.wer.toFixed(2)}` : ''}\n`,
      );
      if (options.limit && pairs.length >= options.limit) break;
    }
    if (options.limit && pairs.length >= options.limit) break;
  }
  await encoder.close();
  const average = (f: (p: PairResult) => number) => pairs.reduce((s, p) => s + f(p), 0) / pairs.length;
  const summary = {
    pairs: pairs.length,
    crossGenderPairs: pairs.filter((p) => p.sourceGender && p.targetGender && p.sourceGender !== p.targetGender).length,
    meanSimilarityOutputToTarget: average((p) => p.similarityOutputToTarget),
    meanSimilaritySourceToTarget: average((p) => p.similaritySourceToTarget),
    meanSimilarityOutputToSource: average((p) => p.similarityOutputToSource),
    closerToTargetThanSourceWas: average((p) => (p.similarityOutputToTarget > p.similaritySourceToTarget ? 1 : 0)),
    closerToTargetThanToSource: average((p) => (p.similarityOutputToTarget > p.similarityOutputToSource ? 1 : 0)),
    meanF0Correlation: average((p) => p.f0Correlation),
    minF0Correlation: Math.min(...pairs.map((p) => p.f0Correlation)),
    durationIdentity: average((p) => (p.sameDuration ? 1 : 0)),
    meanRtf: average((p) => p.rtf),
    maxRtf: Math.max(...pairs.map((p) => p.rtf)),
    meanCpuRtf: average((p) => p.cpuRtf),
    loadAverage: os.loadavg()[0],
    /** Output transcript against the source's (both by whisper base). */
    meanWer: options.transcribe ? average((p) => p.wer?.wer ?? 0) : null,
    maxWer: options.transcribe ? Math.max(...pairs.map((p) => p.wer?.wer ?? 0)) : null,
  };
  return {
    engine: converter.engine,
    modelId: converter.modelId,
    options: { ...options, transcribe: Boolean(options.transcribe) },
    summary,
    pairs,
  };
}

/** Whisper base through the transcription engine, greedy, English. */
async function whisperTranscribe(): Promise<Transcribe> {
  const transcriber = await WhisperCppTranscriber.load(await modelFile('whisper-base', 'ggml-base.bin'), {
    modelId: 'whisper-base',
    threads: 2,
  });
  return async (waveform) => {
    const result = await transcriber.transcribe(waveform.samples, { language: 'en', temperature: 0 });
    return result.segments
      .map((segment) => segment.text)
      .join(' ')
      .trim();
  };
}

/** 16 kHz mono copy for the encoder and pitch tracker. */
async function decodeLike(waveform: Waveform): Promise<Waveform> {
  const { resample } = await import('../src/audio/resample.js');
  return resample(waveform, 16000);
}

async function harvestCorrelation(world: World, source: Float32Array, output: Float32Array): Promise<number> {
  const options = { sampleRate: 16000, framePeriodMs: 5, fftSize: 1024, f0FloorHz: 60, f0CeilHz: 700, harvest: true };
  const track = async (samples: Float32Array) => world.f0(samples, { ...options, ...(await speakerF0Range(world, samples, options)) });
  const [a, b] = [await track(source), await track(output)];
  const xs: number[] = [];
  const ys: number[] = [];
  for (let t = 0; t < Math.min(a.length, b.length); t++) {
    if (a[t]! > 0 && b[t]! > 0) {
      xs.push(Math.log(a[t]!));
      ys.push(Math.log(b[t]!));
    }
  }
  return pearson(xs, ys);
}

function pearson(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((s, v) => s + v, 0) / n;
  const my = ys.reduce((s, v) => s + v, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(repoRoot, 'bench', 'vc.ts')) {
  const { values } = parseArgs({
    options: {
      wer: { type: 'boolean' },
      limit: { type: 'string' },
      every: { type: 'string' },
      dio: { type: 'boolean' },
      out: { type: 'string' },
    },
  });
  const report = await runVcBench({
    limit: values.limit ? Number(values.limit) : undefined,
    every: values.every ? Number(values.every) : undefined,
    harvest: !values.dio,
    transcribe: values.wer ? await whisperTranscribe() : undefined,
  });
  const out = values.out ?? path.join(repoRoot, 'bench', 'results', 'vc.json');
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(JSON.stringify(report.summary, null, 2));
}

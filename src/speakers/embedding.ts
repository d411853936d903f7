/**
 * Speaker embeddings with Resemblyzer's GE2E encoder (ONNX, see src/models/convert/ge2e-to-onnx.ts): 256 non-negative
 * floats of unit norm per utterance. Voice profiles (blend search, gender estimate) and voice conversion use it; speaker
 * labels, diarization and named speakers use CAM++ (./campplus.ts). bench/speaker-embeddings.ts measures both per use.
 *
 * The front end reproduces Resemblyzer's, since the weights mean nothing otherwise: 16 kHz mono, volume raised to
 * -30 dBFS (never lowered), long silences trimmed, power (not log) mel spectrogram of 40 bands, 25 ms / 10 ms frames.
 */
import { VoxError } from '../core/errors.js';
import { normalizeVolume } from '../audio/loudness.js';
import { melSpectrogram } from '../audio/mel.js';
import { energyVoiceFlags, trimLongSilences, type VoiceFlagger } from '../audio/silence.js';
import type { Waveform } from '../audio/waveform.js';
import { ge2eEmbeddingSize, ge2eMelBands } from '../models/convert/ge2e-to-onnx.js';
import { WorkerSession } from '../models/onnx-worker.js';

export const embeddingSampleRate = 16000;
export const embeddingSize = ge2eEmbeddingSize;
const hopSamples = 160;
const melOptions = {
  sampleRate: embeddingSampleRate,
  fftSize: 400,
  hopSize: hopSamples,
  melBands: ge2eMelBands,
  padMode: 'reflect',
} as const;
const targetDbfs = -30;
/** 1.6 s partial utterances ... */
const partialFrames = 160;
/** ... 1.3 of them per second: round(16000 / 1.3 / 160) = 77 frames apart. */
const partialStepFrames = Math.round(embeddingSampleRate / 1.3 / hopSamples);
/** The last partial is used only if audio covers this much of it. */
const minLastPartialCoverage = 0.75;
/** Below this much speech left after trimming, the untrimmed utterance is embedded instead. */
const minTrimmedSeconds = 0.5;

export interface SpeakerEncoderOptions {
  threads?: number;
  /** Voice decisions for silence trimming of utterances; default energy-based (swap in `sileroVoiceFlags`). */
  voiceFlags?: VoiceFlagger;
  /** Partial utterances per inference call. */
  batchSize?: number;
}

export class SpeakerEncoder {
  private constructor(
    private readonly session: WorkerSession,
    private readonly voiceFlags: VoiceFlagger,
    private readonly batchSize: number,
  ) {}

  static async load(onnxPath: string, options: SpeakerEncoderOptions = {}): Promise<SpeakerEncoder> {
    const session = await WorkerSession.create('GE2E', onnxPath, {
      intraOpNumThreads: options.threads ?? 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
    });
    return new SpeakerEncoder(session, options.voiceFlags ?? energyVoiceFlags, options.batchSize ?? 64);
  }

  async close(): Promise<void> {
    await this.session.close();
  }

  /** Embedding of one utterance: mean of its partial embeddings, L2-normalised. */
  async embedUtterance(waveform: Waveform, signal?: AbortSignal): Promise<Float32Array> {
    const loud = normalizeVolume(checkedSamples(waveform), targetDbfs, { increaseOnly: true });
    const trimmed = await trimLongSilences(loud, embeddingSampleRate, this.voiceFlags);
    const samples = trimmed.length >= minTrimmedSeconds * embeddingSampleRate ? trimmed : loud;
    if (samples.length === 0) throw new VoxError('invalid_request', 'Cannot embed an empty recording.', { param: 'audio' });

    const starts = partialStarts(samples.length);
    const paddedLength = (starts[starts.length - 1]! + partialFrames) * hopSamples;
    const padded = new Float32Array(Math.max(paddedLength, samples.length));
    padded.set(samples);
    const mel = melSpectrogram(padded, melOptions);
    const partials = await this.embedSpans(
      mel.data,
      starts.map((start) => ({ startFrame: start, frames: partialFrames })),
      signal,
    );
    return normalise(meanOf(partials));
  }

  /** Runs the encoder over mel spans, batching spans of equal length together. */
  private async embedSpans(
    mel: Float32Array,
    spans: Array<{ startFrame: number; frames: number }>,
    signal?: AbortSignal,
  ): Promise<Float32Array[]> {
    const results = new Array<Float32Array>(spans.length);
    const byLength = new Map<number, number[]>();
    for (const [i, span] of spans.entries()) byLength.set(span.frames, [...(byLength.get(span.frames) ?? []), i]);
    for (const [frames, indices] of byLength) {
      for (let b = 0; b < indices.length; b += this.batchSize) {
        signal?.throwIfAborted();
        const batch = indices.slice(b, b + this.batchSize);
        const input = new Float32Array(batch.length * frames * ge2eMelBands);
        batch.forEach((spanIndex, row) => {
          const start = spans[spanIndex]!.startFrame * ge2eMelBands;
          input.set(mel.subarray(start, start + frames * ge2eMelBands), row * frames * ge2eMelBands);
        });
        const output = await this.session.run({ mels: this.session.tensor('float32', input, [batch.length, frames, ge2eMelBands]) });
        const data = output.embedding!.data as Float32Array;
        batch.forEach((spanIndex, row) => {
          results[spanIndex] = data.slice(row * embeddingSize, (row + 1) * embeddingSize);
        });
      }
    }
    return results;
  }
}

function checkedSamples(waveform: Waveform): Float32Array {
  if (waveform.sampleRate !== embeddingSampleRate || waveform.channels !== 1) {
    throw new VoxError('internal', `Speaker embedding needs 16 kHz mono audio, got ${waveform.sampleRate} Hz x ${waveform.channels}.`);
  }
  return waveform.samples;
}

/** First mel frame of each partial utterance (Resemblyzer's `compute_partial_slices`). */
export function partialStarts(sampleCount: number): number[] {
  const frames = Math.ceil((sampleCount + 1) / hopSamples);
  const steps = Math.max(1, frames - partialFrames + partialStepFrames + 1);
  const starts: number[] = [];
  for (let start = 0; start < steps; start += partialStepFrames) starts.push(start);
  const last = starts[starts.length - 1]!;
  const coverage = (sampleCount - last * hopSamples) / (partialFrames * hopSamples);
  if (coverage < minLastPartialCoverage && starts.length > 1) starts.pop();
  return starts;
}

function meanOf(vectors: Float32Array[]): Float32Array {
  const size = vectors[0]?.length ?? 0;
  const mean = new Float32Array(size);
  for (const v of vectors) for (let i = 0; i < size; i++) mean[i] = mean[i]! + v[i]! / vectors.length;
  return mean;
}

export function normalise(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const v of vector) norm += v * v;
  norm = Math.sqrt(norm);
  return norm > 0 ? vector.map((v) => v / norm) : vector;
}

export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new RangeError('embeddings of different sizes');
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    normA += a[i]! * a[i]!;
    normB += b[i]! * b[i]!;
  }
  return normA > 0 && normB > 0 ? dot / Math.sqrt(normA * normB) : 0;
}

/** L2-normalised mean of several embeddings (e.g. a speaker's reference clips). */
export function averageEmbedding(embeddings: Float32Array[]): Float32Array {
  if (embeddings.length === 0) throw new RangeError('no embeddings to average');
  return normalise(meanOf(embeddings));
}

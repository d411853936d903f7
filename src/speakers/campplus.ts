/**
 * Speaker embeddings with CAM++ (ONNX, see src/models/convert/campp-to-onnx.ts): 192 floats per utterance or per window
 * of a recording. The network turns Kaldi fbank frames (mean-normalised per bin) into 512-channel frames at 50 per
 * second; statistics pooling (mean and standard deviation per channel) and a dense layer with batch norm, done here,
 * make the embedding. Diarization pools short windows of one network run; voice profiles and speaker identification
 * pool whole utterances.
 */
import { fbank, subtractBinMeans } from '../audio/fbank.js';
import type { Waveform } from '../audio/waveform.js';
import { VoxError } from '../core/errors.js';
import { camppBatchNormEpsilon, camppEmbeddingSize, camppFrameChannels, camppMelBins } from '../models/convert/campp-to-onnx.js';
import { readModel } from '../models/convert/onnx-graph.js';
import { WorkerSession } from '../models/onnx-worker.js';
import { averageEmbedding } from './embedding.js';

export const camppSampleRate = 16000;
/** CAM++ frames: the network halves the 10 ms fbank rate. */
const frameSeconds = 0.02;
/** An utterance is run in pieces of at most this long: a minute-long run already peaks at over 300 MB. */
const maxPieceSamples = 60 * camppSampleRate;
/** Pieces shorter than this are left out of a long utterance (too few frames for their own normalisation). */
const minPieceSamples = camppSampleRate;

interface PoolingHead {
  /** [192, 1024] */
  weight: Float32Array;
  mean: Float32Array;
  variance: Float32Array;
}

/** The network's output for one run: `channels` rows of `frameCount` frames. */
export interface CamppFrames {
  data: Float32Array;
  frameCount: number;
}

export class CamppEncoder {
  private constructor(
    private readonly session: WorkerSession,
    private readonly head: PoolingHead,
  ) {}

  static async load(onnxPath: string, options: { threads?: number } = {}): Promise<CamppEncoder> {
    // No memory arena: it would keep the peak of a minute-long CAM++ run (over 300 MB) for the process's life.
    const [session, head] = await Promise.all([
      WorkerSession.create('CAM++', onnxPath, {
        intraOpNumThreads: options.threads ?? 1,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        enableCpuMemArena: false,
      }),
      readPoolingHead(onnxPath),
    ]);
    return new CamppEncoder(session, head);
  }

  async close(): Promise<void> {
    await this.session.close();
  }

  /** The network over 16 kHz mono samples. */
  async frames(samples: Float32Array, signal?: AbortSignal): Promise<CamppFrames> {
    signal?.throwIfAborted();
    const features = subtractBinMeans(fbank(samples, { sampleRate: camppSampleRate, melBins: camppMelBins }));
    const output = await this.session.run({ fbank: this.session.tensor('float32', features.data, [1, features.frames, camppMelBins]) });
    const frames = output.frames!;
    return { data: frames.data as Float32Array, frameCount: frames.dims[2] ?? 0 };
  }

  /** Embeddings of time spans of one network run (at least two frames each). */
  embedSpans(frames: CamppFrames, spans: Array<{ startSeconds: number; endSeconds: number }>): Float32Array[] {
    const { frameCount } = frames;
    return spans.map((span) => {
      const first = Math.min(frameCount - 2, Math.max(0, Math.round(span.startSeconds / frameSeconds)));
      const end = Math.max(first + 2, Math.min(frameCount, Math.round(span.endSeconds / frameSeconds)));
      const statistics = new Statistics();
      statistics.add(frames, first, end);
      return this.dense(statistics.pooled());
    });
  }

  /**
   * One embedding for a whole utterance (16 kHz mono): statistics pooled over all its frames, as the model was trained.
   * Long audio is run a minute at a time, its statistics summed over the pieces.
   */
  async embedUtterance(waveform: Waveform, signal?: AbortSignal): Promise<Float32Array> {
    if (waveform.sampleRate !== camppSampleRate || waveform.channels !== 1) {
      throw new VoxError('internal', `Speaker embedding needs 16 kHz mono audio, got ${waveform.sampleRate} Hz x ${waveform.channels}.`);
    }
    const { samples } = waveform;
    if (samples.length < 0.1 * camppSampleRate)
      throw new VoxError('invalid_request', 'Cannot embed a recording of under 0.1 s.', { param: 'audio' });
    const statistics = new Statistics();
    for (let start = 0; start < samples.length; start += maxPieceSamples) {
      const piece = samples.subarray(start, start + maxPieceSamples);
      if (start > 0 && piece.length < minPieceSamples) break;
      const frames = await this.frames(piece, signal);
      statistics.add(frames, 0, frames.frameCount);
    }
    return this.dense(statistics.pooled());
  }

  /** A speaker's embedding from several utterances: the L2-normalised mean of theirs. */
  async embedSpeaker(clips: Waveform[], signal?: AbortSignal): Promise<Float32Array> {
    const embeddings: Float32Array[] = [];
    for (const clip of clips) embeddings.push(await this.embedUtterance(clip, signal));
    return averageEmbedding(embeddings);
  }

  private dense(statistics: Float64Array): Float32Array {
    const { weight, mean, variance } = this.head;
    const embedding = new Float32Array(camppEmbeddingSize);
    for (let o = 0; o < camppEmbeddingSize; o++) {
      let dot = 0;
      const row = o * 2 * camppFrameChannels;
      for (let i = 0; i < 2 * camppFrameChannels; i++) dot += weight[row + i]! * statistics[i]!;
      embedding[o] = (dot - mean[o]!) / Math.sqrt(variance[o]! + camppBatchNormEpsilon);
    }
    return embedding;
  }
}

/** Per-channel sums over frames, possibly of several runs: mean and (sample) standard deviation when pooled. */
class Statistics {
  private readonly sums = new Float64Array(camppFrameChannels);
  private readonly squares = new Float64Array(camppFrameChannels);
  private count = 0;

  add({ data, frameCount }: CamppFrames, first: number, end: number): void {
    for (let c = 0; c < camppFrameChannels; c++) {
      const row = c * frameCount;
      let sum = 0;
      for (let t = first; t < end; t++) sum += data[row + t]!;
      const mean = sum / (end - first);
      let squares = 0;
      for (let t = first; t < end; t++) squares += (data[row + t]! - mean) ** 2;
      // Chan et al.'s pairwise update: runs combine exactly, without the precision a plain sum of squares loses.
      const n = end - first;
      if (this.count > 0) {
        const delta = mean - this.sums[c]! / this.count;
        this.squares[c] = this.squares[c]! + squares + (delta * delta * this.count * n) / (this.count + n);
      } else {
        this.squares[c] = squares;
      }
      this.sums[c] = this.sums[c]! + sum;
    }
    this.count += end - first;
  }

  pooled(): Float64Array {
    const statistics = new Float64Array(2 * camppFrameChannels);
    for (let c = 0; c < camppFrameChannels; c++) {
      statistics[c] = this.sums[c]! / this.count;
      statistics[camppFrameChannels + c] = Math.sqrt(this.squares[c]! / (this.count - 1));
    }
    return statistics;
  }
}

/** The dense layer after statistics pooling, read from the converted model's initializers. */
async function readPoolingHead(camppPath: string): Promise<PoolingHead> {
  const model = await readModel(camppPath);
  const initializer = (name: string, length: number): Float32Array => {
    const tensor = model.graph?.initializer?.find((t) => t.name === name);
    if (!tensor?.rawData || tensor.rawData.length !== length * 4)
      throw new VoxError('internal', `CAM++ model lacks its ${name} initializer.`);
    // Copied: the protobuf bytes need not be 4-byte aligned.
    return new Float32Array(Uint8Array.from(tensor.rawData).buffer);
  };
  return {
    weight: initializer('dense_weight', camppEmbeddingSize * 2 * camppFrameChannels),
    mean: initializer('dense_mean', camppEmbeddingSize),
    variance: initializer('dense_var', camppEmbeddingSize),
  };
}

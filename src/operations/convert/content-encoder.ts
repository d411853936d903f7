/**
 * Content features for kNN voice conversion (issue 36): the residual stream after the first blocks of Whisper base's
 * audio encoder (a truncated graph from src/models/convert/whisper-encoder-to-onnx.ts), one 512-value frame per 20 ms.
 * Which block: bench/vc-content-features.ts (same-phone retrieval across speakers). Audio longer than the encoder's
 * 30 s context goes through in windows; their frames are concatenated.
 */
import { whisperLogMel, whisperMelOptions } from '../../audio/mel.js';
import { VoxError } from '../../core/errors.js';
import { WorkerSession } from '../../models/onnx-worker.js';

/** Audio samples (16 kHz) per content frame: two mel hops, the encoder's stride. */
export const contentHopSamples = 2 * whisperMelOptions.hopSize;
/** Whisper's positional embedding covers 1500 frames (30 s). */
const windowMelFrames = 3000;

export interface ContentFeatures {
  frames: number;
  dims: number;
  /** Frame-major: value d of frame t at t * dims + d. */
  data: Float32Array;
}

export class ContentEncoder {
  private constructor(private readonly session: WorkerSession) {}

  static async load(onnxPath: string, options: { threads?: number } = {}): Promise<ContentEncoder> {
    const session = await WorkerSession.create('Whisper content encoder', onnxPath, {
      intraOpNumThreads: options.threads ?? 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      enableCpuMemArena: false,
    });
    return new ContentEncoder(session);
  }

  /** Frames of 16 kHz mono audio: ceil(floor(samples / 160) / 2), frame t centred near sample t * 320. */
  async features(samples: Float32Array): Promise<ContentFeatures> {
    const mel = whisperLogMel(samples);
    if (mel.frames < 2) throw new VoxError('invalid_request', 'The audio is too short for content features.', { param: 'audio' });
    const parts: Float32Array[] = [];
    let dims = 0;
    for (let start = 0; start < mel.frames; start += windowMelFrames) {
      const frames = Math.min(windowMelFrames, mel.frames - start);
      // The network wants band-major [1, 80, frames].
      const bandMajor = new Float32Array(frames * mel.melBands);
      for (let t = 0; t < frames; t++) {
        for (let b = 0; b < mel.melBands; b++) bandMajor[b * frames + t] = mel.data[(start + t) * mel.melBands + b]!;
      }
      const outputs = await this.session.run({ mel: this.session.tensor('float32', bandMajor, [1, mel.melBands, frames]) });
      const tensor = outputs.embd;
      if (!tensor) throw new VoxError('internal', 'The content encoder has no output embd.');
      dims = tensor.dims[2]!;
      parts.push(tensor.data as Float32Array);
    }
    const data = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
    let offset = 0;
    for (const part of parts) {
      data.set(part, offset);
      offset += part.length;
    }
    return { frames: data.length / dims, dims, data };
  }

  /** Every output of a graph built with blockOutputs, for one window of at most 30 s (for measuring layers). */
  async allOutputs(samples: Float32Array): Promise<Record<string, ContentFeatures>> {
    const mel = whisperLogMel(samples);
    if (mel.frames > windowMelFrames) throw new VoxError('internal', 'allOutputs takes at most 30 s.');
    const bandMajor = new Float32Array(mel.frames * mel.melBands);
    for (let t = 0; t < mel.frames; t++) {
      for (let b = 0; b < mel.melBands; b++) bandMajor[b * mel.frames + t] = mel.data[t * mel.melBands + b]!;
    }
    const outputs = await this.session.run({ mel: this.session.tensor('float32', bandMajor, [1, mel.melBands, mel.frames]) });
    return Object.fromEntries(
      Object.entries(outputs).map(([name, tensor]) => {
        const data = tensor.data as Float32Array;
        return [name, { frames: tensor.dims[1]!, dims: tensor.dims[2]!, data }];
      }),
    );
  }

  close(): Promise<void> {
    return this.session.close();
  }
}

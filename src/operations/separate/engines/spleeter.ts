/**
 * Deezer's Spleeter 2-stem U-Nets (vocals, accompaniment) on onnxruntime-node, with Spleeter's front end: 44.1 kHz,
 * STFT 4096 / hop 1024 (periodic Hann, centred, zero padded), the magnitude of bins 0..1023 (0-11 kHz) fed in pieces
 * of at most 512 frames, a mono signal as two identical channels. Each net answers a sigmoid mask per bin; the two are
 * combined into ratio masks. The graphs are fully convolutional (no state), so the separator runs them on its chunks.
 */
import path from 'node:path';
import type { Spectrogram, StftOptions } from '../../../audio/stft.js';
import { spleeterInput, spleeterOutput } from '../../../models/convert/spleeter-to-onnx.js';
import { WorkerSession } from '../../../models/onnx-worker.js';

export const spleeterSampleRate = 44100;
export const spleeterStft: StftOptions = { fftSize: 4096, hopSize: 1024, padMode: 'constant' };
/** Bins the nets see (0-11 kHz at 44.1 kHz); the band above gets no mask from them. */
export const spleeterBins = 1024;
/** The training segment length; longer inputs are cut into near-equal pieces no longer than this. */
const maxPieceFrames = 512;
/** Six stride-2 layers: piece lengths are rounded up to a multiple of 2^6 (zero padded). */
const frameQuantum = 64;

/** Per frame, bins 0..spleeterBins-1 (frame-major), the vocal share of each bin in [0, 1]; accompaniment is 1 minus it. */
export interface VocalRatio {
  frames: number;
  vocals: Float32Array;
}

export class SpleeterModel {
  readonly id = 'spleeter-2stems';

  private constructor(
    private readonly vocals: WorkerSession,
    private readonly accompaniment: WorkerSession,
  ) {}

  /** Each net in its own worker (one thread each): the two run side by side. */
  static async load(modelDir: string): Promise<SpleeterModel> {
    const options = { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all' as const, enableCpuMemArena: false };
    const [vocals, accompaniment] = await Promise.all(
      ['vocals', 'accompaniment'].map((net) => WorkerSession.create(`Spleeter ${net}`, path.join(modelDir, `${net}.onnx`), options)),
    );
    return new SpleeterModel(vocals!, accompaniment!);
  }

  async close(): Promise<void> {
    await Promise.all([this.vocals.close(), this.accompaniment.close()]);
  }

  /**
   * The magnitude ratio mask |v| / (|v| + |a|) of a spectrogram taken with `spleeterStft` at 44.1 kHz. `feedGain`
   * scales the magnitude the nets see (they have no input normalisation, so their masks depend on the level).
   */
  async vocalRatio(spec: Spectrogram, feedGain: number, signal?: AbortSignal): Promise<VocalRatio> {
    const { frames, bins } = spec;
    const ratio = new Float32Array(frames * spleeterBins);
    const pieces = Math.max(1, Math.ceil(frames / maxPieceFrames));
    const pieceFrames = Math.ceil(frames / pieces / frameQuantum) * frameQuantum;
    for (let start = 0; start < frames; start += pieceFrames) {
      if (signal?.aborted) throw signal.reason;
      const used = Math.min(pieceFrames, frames - start);
      const channel = pieceFrames * spleeterBins;
      const input = new Float32Array(2 * channel);
      for (let t = 0; t < used; t++) {
        const row = (start + t) * bins;
        for (let k = 0; k < spleeterBins; k++) input[t * spleeterBins + k] = feedGain * Math.hypot(spec.re[row + k]!, spec.im[row + k]!);
      }
      input.copyWithin(channel, 0, channel);
      const dims = [1, 2, pieceFrames, spleeterBins];
      const [v, a] = await Promise.all(
        [this.vocals, this.accompaniment].map(
          async (session) =>
            (await session.run({ [spleeterInput]: session.tensor('float32', input, dims) }))[spleeterOutput]!.data as Float32Array,
        ),
      );
      // The two output channels answer the same mono input: average them.
      for (let i = 0; i < used * spleeterBins; i++) {
        const mv = v![i]! + v![channel + i]!;
        const ma = a![i]! + a![channel + i]!;
        ratio[start * spleeterBins + i] = mv + ma > 0 ? mv / (mv + ma) : 0.5;
      }
    }
    return { frames, vocals: ratio };
  }
}

/**
 * HiFi-GAN V1 (ONNX, see src/models/convert/hifigan-to-onnx.ts): log-mel frames (src/audio/mel.ts `vocoderLogMel`) to a
 * 22.05 kHz waveform, 256 samples per frame. The renderer of the neural conversion path (issue 36).
 */
import { vocoderLogMel } from '../../audio/mel.js';
import type { Waveform } from '../../audio/waveform.js';
import { VoxError } from '../../core/errors.js';
import { hifiganHopSamples, hifiganMelBands, hifiganSampleRate } from '../../models/convert/hifigan-to-onnx.js';
import { WorkerSession } from '../../models/onnx-worker.js';

export class HifiganVocoder {
  private constructor(private readonly session: WorkerSession) {}

  static async load(onnxPath: string, options: { threads?: number } = {}): Promise<HifiganVocoder> {
    const session = await WorkerSession.create('HiFi-GAN', onnxPath, {
      intraOpNumThreads: options.threads ?? 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      // No memory arena: it would keep the peak of the longest run (the upsampled activations) for the process's life.
      enableCpuMemArena: false,
    });
    return new HifiganVocoder(session);
  }

  /** Frame-major log-mel frames (band b of frame t at t * 80 + b) -> mono 22.05 kHz audio of frames * 256 samples. */
  async render(logMel: Float32Array): Promise<Waveform> {
    const frames = logMel.length / hifiganMelBands;
    if (!Number.isInteger(frames) || frames === 0) {
      throw new VoxError('internal', `HiFi-GAN needs whole frames of ${hifiganMelBands} mel bands, got ${logMel.length} values.`);
    }
    // The network wants band-major [1, 80, frames].
    const bandMajor = new Float32Array(logMel.length);
    for (let t = 0; t < frames; t++) {
      for (let b = 0; b < hifiganMelBands; b++) bandMajor[b * frames + t] = logMel[t * hifiganMelBands + b]!;
    }
    const output = await this.session.run({ mel: this.session.tensor('float32', bandMajor, [1, hifiganMelBands, frames]) });
    const samples = output.audio!.data as Float32Array;
    if (samples.length !== frames * hifiganHopSamples) throw new VoxError('internal', 'HiFi-GAN returned an unexpected length.');
    return { samples, sampleRate: hifiganSampleRate, channels: 1 };
  }

  /** Analysis and resynthesis of mono 22.05 kHz audio (the vocoder's own ceiling on quality). */
  async resynthesize(waveform: Waveform): Promise<Waveform> {
    if (waveform.channels !== 1 || waveform.sampleRate !== hifiganSampleRate) {
      throw new VoxError('internal', `HiFi-GAN resynthesis takes mono ${hifiganSampleRate} Hz audio.`);
    }
    return this.render(vocoderLogMel(waveform.samples).data);
  }

  async close(): Promise<void> {
    await this.session.close();
  }
}

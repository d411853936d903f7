/**
 * Whisper's encoder on onnxruntime (a graph that src/models/convert/whisper-encoder-to-onnx.ts writes), for whisper.cpp's
 * decoding: a WhisperModel given `encode` hands it every window's log-mel. The session runs in its own worker thread, so
 * the event loop stays free while a window encodes (about 1 s of CPU per 30 s window in float32 here) and whisper.cpp's
 * decoding thread waits for the result.
 */
import { sleepingThreadsOptions, WorkerSession } from '../../../models/onnx-worker.js';
import type { WhisperEncoder } from './whisper-native.js';

export class OnnxWhisperEncoder {
  private constructor(private readonly session: WorkerSession) {}

  static async load(modelPath: string, options: { threads: number }): Promise<OnnxWhisperEncoder> {
    // Threads that sleep between windows leave the cores to whisper.cpp's decoding.
    const session = await WorkerSession.create('Whisper encoder', modelPath, sleepingThreadsOptions(options.threads));
    return new OnnxWhisperEncoder(session);
  }

  /** Never throws: a failed run is reported through done, which fails the transcription. */
  readonly encode: WhisperEncoder = (mel, frames, done) => {
    Promise.resolve()
      .then(() => this.session.run({ mel: this.session.tensor('float32', mel, [1, mel.length / frames, frames]) }))
      .then(
        (outputs) => done(outputs.embd!.data as Float32Array),
        (error: unknown) => done(null, error instanceof Error ? error.message : String(error)),
      );
  };

  close(): Promise<void> {
    return this.session.close();
  }
}

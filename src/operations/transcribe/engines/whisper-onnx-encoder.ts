/**
 * Whisper's encoder on onnxruntime (a graph that src/models/convert/whisper-encoder-to-onnx.ts writes), for whisper.cpp's
 * decoding: a WhisperModel given `encode` hands it every window's log-mel. The session runs in its own worker thread, so
 * the event loop stays free while a window encodes (about 1 s of CPU per 30 s window in float32 here) and whisper.cpp's
 * decoding thread waits for the result.
 */
import { sleepingThreadsOptions, WorkerSession } from '../../../models/onnx-worker.js';
import type { WhisperEncoder } from './whisper-native.js';

export class OnnxWhisperEncoder {
  /**
   * The last window encoded. Callers decode one window more than once: forced alignment transcribes a window (to place the
   * text) and then forces the text on it, and a transcription decodes a chunk again after a loop or a run-on. The same
   * log-mel gives the same encoding, so it is not run again (a 25 s window: about 1 s of CPU).
   */
  private last: { mel: Float32Array; frames: number; embedding: Float32Array } | undefined;

  private constructor(private readonly session: WorkerSession) {}

  static async load(modelPath: string, options: { threads: number }): Promise<OnnxWhisperEncoder> {
    // Threads that sleep between windows leave the cores to whisper.cpp's decoding.
    const session = await WorkerSession.create('Whisper encoder', modelPath, sleepingThreadsOptions(options.threads));
    return new OnnxWhisperEncoder(session);
  }

  /** Never throws: a failed run is reported through done, which fails the transcription. */
  readonly encode: WhisperEncoder = (mel, frames, done) => {
    const last = this.last;
    if (last && last.frames === frames && sameValues(last.mel, mel)) {
      done(last.embedding);
      return;
    }
    Promise.resolve()
      .then(() => this.session.run({ mel: this.session.tensor('float32', mel, [1, mel.length / frames, frames]) }))
      .then(
        (outputs) => {
          const embedding = outputs.embd!.data as Float32Array;
          // The addon copies both arrays: neither changes after this.
          this.last = { mel, frames, embedding };
          done(embedding);
        },
        (error: unknown) => done(null, error instanceof Error ? error.message : String(error)),
      );
  };

  close(): Promise<void> {
    return this.session.close();
  }
}

function sameValues(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Kokoro's onnxruntime session in a worker thread. onnxruntime-node runs a session synchronously on the calling
 * thread, so on the main thread every run (hundreds of milliseconds) would hold the event loop: streamed pieces could
 * not be sent, nor other requests answered, until it ended.
 *
 * The worker's code is plain JavaScript in a string so it runs the same from the sources (tsx) and from the build.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { InferenceSession } from 'onnxruntime-node';

/** Inputs of one model run (see KokoroSynthesizer.run). */
export interface KokoroRunInputs {
  tokens: BigInt64Array;
  style: Float32Array;
  speed: number;
  f0Scale: number;
  f0Range: number;
}

type Reply = { id: number; audio: Float32Array } | { id: number; error: string };
/** The worker's first message: its session loaded, or why not. */
type Loaded = { loaded: true } | { loaded: false; error: string };

const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.onnxruntimePath);
ort.InferenceSession.create(workerData.modelPath, workerData.sessionOptions).then(
  (session) => {
    parentPort.on('message', (inputs) => run(session, inputs));
    parentPort.postMessage({ loaded: true });
  },
  (error) => parentPort.postMessage({ loaded: false, error: String(error) }),
);
async function run(session, { id, tokens, style, speed, f0Scale, f0Range }) {
  try {
    const outputs = await session.run({
      tokens: new ort.Tensor('int64', tokens, [1, tokens.length]),
      style: new ort.Tensor('float32', style, [1, style.length]),
      speed: new ort.Tensor('float32', Float32Array.of(speed), [1]),
      f0_scale: new ort.Tensor('float32', Float32Array.of(f0Scale), [1]),
      f0_range: new ort.Tensor('float32', Float32Array.of(f0Range), [1]),
    });
    const audio = Float32Array.from(outputs.audio.data);
    parentPort.postMessage({ id, audio }, [audio.buffer]);
  } catch (error) {
    parentPort.postMessage({ id, error: String(error) });
  }
}
`;

export class KokoroWorker {
  private readonly pending = new Map<number, { resolve: (audio: Float32Array) => void; reject: (error: Error) => void }>();
  private nextId = 0;
  /** Why the worker stopped (a crash, or close()); later runs fail with it instead of waiting forever. */
  private stopped?: Error;

  private constructor(private readonly worker: Worker) {
    // An idle worker does not keep the process alive; one with a run under way does (its caller awaits the reply).
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const waiter = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if ('error' in reply) waiter?.reject(new Error(`Kokoro run failed: ${reply.error}`));
      else waiter?.resolve(reply.audio);
    });
    worker.on('error', (error) => this.stop(error));
    worker.on('exit', (code) => this.stop(new Error(`Kokoro worker exited (code ${code})`)));
  }

  /** Starts the worker and waits until its session is loaded. */
  static async start(modelPath: string, sessionOptions: InferenceSession.SessionOptions): Promise<KokoroWorker> {
    const onnxruntimePath = createRequire(import.meta.url).resolve('onnxruntime-node');
    const worker = new Worker(workerSource, { eval: true, workerData: { modelPath, sessionOptions, onnxruntimePath } });
    const loaded = await new Promise<Loaded>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    if (!loaded.loaded) {
      await worker.terminate();
      throw new Error(`Kokoro model failed to load: ${loaded.error}`);
    }
    return new KokoroWorker(worker);
  }

  /** One model run: padded token ids -> 24 kHz samples. */
  run(inputs: KokoroRunInputs): Promise<Float32Array> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, ...inputs });
    });
  }

  async close(): Promise<void> {
    this.stop(new Error('Kokoro worker closed'));
    await this.worker.terminate();
  }

  private stop(error: Error): void {
    this.stopped ??= error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }
}

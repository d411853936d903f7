/**
 * An onnxruntime session in its own worker thread. onnxruntime-node runs a session synchronously on the calling thread,
 * so on the main thread every run (hundreds of milliseconds for Kokoro, DeepFilterNet3 or a GE2E batch) holds the
 * event loop: health probes, streamed pieces and other requests wait until it ends. Small per-frame models (Silero VAD,
 * DTLN) stay on the main thread, where a run is shorter than the message round trip would cost over a file.
 *
 * The worker's code is plain JavaScript in a string so it runs the same from the sources (tsx) and from the build.
 */
import { createRequire } from 'node:module';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type * as Ort from 'onnxruntime-node';

/** onnxruntime is loaded with the first session: a process that runs no model (an API-only node) never maps it. */
type OnnxRuntime = typeof Ort;

/** A tensor as it crosses the thread boundary. */
interface TensorMessage {
  type: Ort.Tensor.Type;
  data: Ort.Tensor.DataType;
  dims: readonly number[];
}

type Reply = { id: number; outputs: Record<string, TensorMessage> } | { id: number; error: string };
/** The worker's first message: its session loaded (with its input and output names), or why not. */
type Loaded = { loaded: true; inputNames: string[]; outputNames: string[] } | { loaded: false; error: string };

const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.onnxruntimePath);
ort.InferenceSession.create(workerData.model, workerData.sessionOptions).then(
  (session) => {
    // Runs one after another; a close request waits for the run under way, then releases the session and ends the thread.
    let queue = Promise.resolve();
    let closing = false;
    parentPort.on('message', (request) => {
      if (request.close) {
        closing = true;
        queue = queue.then(() => session.release()).finally(() => parentPort.close());
      } else {
        queue = queue.then(() => (closing ? undefined : run(session, request)));
      }
    });
    parentPort.postMessage({ loaded: true, inputNames: session.inputNames, outputNames: session.outputNames });
  },
  (error) => parentPort.postMessage({ loaded: false, error: String(error) }),
);
async function run(session, { id, feeds }) {
  try {
    const inputs = {};
    for (const [name, t] of Object.entries(feeds)) inputs[name] = new ort.Tensor(t.type, t.data, t.dims);
    const results = await session.run(inputs);
    const outputs = {};
    const transfer = [];
    for (const [name, tensor] of Object.entries(results)) {
      outputs[name] = { type: tensor.type, data: tensor.data, dims: tensor.dims };
      transfer.push(tensor.data.buffer);
    }
    parentPort.postMessage({ id, outputs }, transfer);
  } catch (error) {
    parentPort.postMessage({ id, error: String(error) });
  }
}
`;

/**
 * Options of a large model's session: one operator at a time on `threads` threads, fully optimised, and intra-op threads
 * that sleep between runs (spinning ones burn the cores other engines share, without making runs faster here).
 */
export function sleepingThreadsOptions(threads: number): Ort.InferenceSession.SessionOptions {
  return {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  };
}

/**
 * One-thread sessions of a model for work nobody waits on piece by piece (analysing many built-in voices), where
 * throughput matters more than a single run's latency: two one-thread Kokoro runs side by side analysed 28 voices in
 * 52 s of wall time and 102 CPU-seconds, two runs sharing one two-thread session 66 s and 115. Opened on demand, up to
 * `size`, and closed after `idleMs` without a run, since each holds the model in memory (Kokoro: about 210 MB).
 */
export class SessionPool {
  private readonly idle: WorkerSession[] = [];
  private readonly waiting: Array<{ resolve: (session: WorkerSession) => void; reject: (error: unknown) => void }> = [];
  private opened = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly name: string,
    private readonly modelPath: string,
    private readonly size: number,
    private readonly idleMs = 10_000,
  ) {}

  async run(feeds: Record<string, Ort.Tensor>): Promise<Record<string, Ort.Tensor>> {
    const session = await this.acquire();
    try {
      const outputs = await session.run(feeds);
      this.release(session);
      return outputs;
    } catch (error) {
      // A failed run may have stopped its worker: it is not handed out again, and a waiting run gets a new one.
      this.opened--;
      void session.close();
      const waiter = this.waiting.shift();
      if (waiter) this.open().then(waiter.resolve, waiter.reject);
      throw error;
    }
  }

  /** Closes the idle sessions (a later run opens new ones). */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const sessions = this.idle.splice(0);
    this.opened -= sessions.length;
    await Promise.all(sessions.map((session) => session.close()));
  }

  private acquire(): Promise<WorkerSession> {
    clearTimeout(this.idleTimer);
    const free = this.idle.pop();
    if (free) return Promise.resolve(free);
    if (this.opened >= this.size) return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
    return this.open();
  }

  private async open(): Promise<WorkerSession> {
    this.opened++;
    try {
      return await WorkerSession.create(this.name, this.modelPath, sleepingThreadsOptions(1));
    } catch (error) {
      this.opened--;
      throw error;
    }
  }

  private release(session: WorkerSession): void {
    const waiter = this.waiting.shift();
    if (waiter) {
      waiter.resolve(session);
      return;
    }
    this.idle.push(session);
    if (this.idle.length === this.opened) this.idleTimer = setTimeout(() => void this.close(), this.idleMs).unref();
  }
}

/**
 * Model loads and runs under way in the workers of the process. Exiting while a worker is inside onnxruntime aborts the
 * whole process (its binding throws into the stopped thread, see close()), so an exit that cannot wait for close() waits
 * for this count to reach zero: a load or run always ends within seconds.
 */
let nativeWorkUnderWay = 0;
const idleWaiters: Array<() => void> = [];

function endNativeWork(count: number): void {
  nativeWorkUnderWay -= count;
  if (nativeWorkUnderWay === 0) for (const wake of idleWaiters.splice(0)) wake();
}

/** Resolves once no worker is loading or running a model: from then on the process may exit. */
export function onnxWorkersIdle(): Promise<void> {
  return nativeWorkUnderWay === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve));
}

export class WorkerSession {
  private readonly pending = new Map<number, { resolve: (outputs: Record<string, Ort.Tensor>) => void; reject: (error: Error) => void }>();
  private nextId = 0;
  /** Why the worker stopped (a crash, or close()); later runs fail with it instead of waiting forever. */
  private stopped?: Error;
  private exited = false;
  private closing = false;
  /** Runs posted to the worker and not answered yet (after close(), the worker skips queued ones and exits). */
  private runsInWorker = 0;

  private constructor(
    private readonly ort: OnnxRuntime,
    private readonly worker: Worker,
    /** Names errors (e.g. 'Kokoro'). */
    private readonly name: string,
    readonly inputNames: readonly string[],
    readonly outputNames: readonly string[],
  ) {
    // An idle worker does not keep the process alive; one with a run under way does (its caller awaits the reply).
    worker.unref();
    worker.on('message', (reply: Reply) => {
      this.runsInWorker--;
      endNativeWork(1);
      const waiter = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      // Idle, it does not keep the process alive; closing, it must until it has exited (it may still be releasing its session).
      if (this.pending.size === 0 && !this.closing) worker.unref();
      if ('error' in reply) waiter?.reject(new Error(`${name} run failed: ${reply.error}`));
      else
        waiter?.resolve(
          Object.fromEntries(
            Object.entries(reply.outputs).map(([key, t]) => [key, new this.ort.Tensor(t.type, t.data as Float32Array, t.dims)]),
          ),
        );
    });
    worker.on('error', (error) => this.stop(error));
    worker.on('exit', (code) => {
      this.exited = true;
      endNativeWork(this.runsInWorker);
      this.runsInWorker = 0;
      this.stop(new Error(`${name} worker exited (code ${code})`));
    });
  }

  /** Starts a worker and waits until its session is loaded (`model`: a file's path or a model's bytes). */
  static async create(
    name: string,
    model: string | Uint8Array,
    sessionOptions: Ort.InferenceSession.SessionOptions,
  ): Promise<WorkerSession> {
    const onnxruntimePath = createRequire(import.meta.url).resolve('onnxruntime-node');
    const worker = new Worker(workerSource, { eval: true, workerData: { model, sessionOptions, onnxruntimePath } });
    nativeWorkUnderWay++;
    const loaded = await new Promise<Loaded>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    }).finally(() => endNativeWork(1));
    if (!loaded.loaded) {
      await worker.terminate();
      throw new Error(`${name} model failed to load: ${loaded.error}`);
    }
    return new WorkerSession(await import('onnxruntime-node'), worker, name, loaded.inputNames, loaded.outputNames);
  }

  /** A tensor for `run`, made by the session's own runtime (callers need not load onnxruntime). */
  tensor(type: 'float32', data: Float32Array, dims: readonly number[]): Ort.Tensor;
  tensor(type: 'int64', data: BigInt64Array, dims: readonly number[]): Ort.Tensor;
  tensor(type: 'float32' | 'int64', data: Float32Array | BigInt64Array, dims: readonly number[]): Ort.Tensor {
    return type === 'float32'
      ? new this.ort.Tensor(type, data as Float32Array, dims)
      : new this.ort.Tensor(type, data as BigInt64Array, dims);
  }

  /** One run. Inputs are copied to the worker (callers may reuse them); outputs are moved back. */
  run(feeds: Record<string, Ort.Tensor>): Promise<Record<string, Ort.Tensor>> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    const message = Object.fromEntries(Object.entries(feeds).map(([key, t]) => [key, { type: t.type, data: t.data, dims: t.dims }]));
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.runsInWorker++;
      nativeWorkUnderWay++;
      this.worker.ref();
      this.worker.postMessage({ id, feeds: message });
    });
  }

  /**
   * Ends the worker once its run under way returns. A run is native code: terminating the thread under it (terminate(),
   * or process.exit() while it runs) makes onnxruntime's binding throw into a dead isolate, which aborts the whole process.
   */
  async close(): Promise<void> {
    this.stop(new Error(`${this.name} worker closed`));
    if (this.exited) return;
    const exited = once(this.worker, 'exit');
    this.closing = true;
    this.worker.ref();
    this.worker.postMessage({ close: true });
    await exited;
  }

  private stop(error: Error): void {
    this.stopped ??= error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }
}

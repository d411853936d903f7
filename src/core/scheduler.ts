/**
 * Inference admission: per operation, a short lane and a long lane, each with bounded concurrency and a bounded queue.
 * Short inputs never wait behind long ones; a full queue is answered with 503 + Retry-After instead of piling up.
 */
import PQueue from 'p-queue';
import { VoxError } from './errors.js';
import type { Metrics } from './metrics.js';
import { operations, type Operation } from './records.js';

type Lane = 'short' | 'long';

export interface SchedulerOptions {
  concurrency: number;
  queueLimit: number;
  shortJobSeconds: number;
}

export class Scheduler {
  private readonly lanes = new Map<string, PQueue>();
  private accepting = true;

  constructor(
    private readonly options: SchedulerOptions,
    metrics: Metrics,
  ) {
    for (const operation of operations) {
      for (const lane of ['short', 'long'] as const) {
        const queue = new PQueue({ concurrency: options.concurrency });
        const update = (): void => {
          metrics.queueDepth.set({ operation, lane }, queue.size);
          metrics.jobsRunning.set({ operation, lane }, queue.pending);
        };
        queue.on('add', update);
        queue.on('active', update);
        queue.on('next', update);
        this.lanes.set(`${operation}/${lane}`, queue);
      }
    }
  }

  /**
   * Runs `work` when a slot is free. `audioSeconds` picks the lane; the signal removes a waiting job or stops a running
   * one. Work that answers before it is finished (a stream) passes the rest of its work to `keepSlotUntil`: the slot
   * stays taken, and drain() waits, until that settles.
   */
  async run<T>(
    operation: Operation,
    audioSeconds: number,
    signal: AbortSignal | undefined,
    work: (signal: AbortSignal | undefined, keepSlotUntil: (rest: Promise<unknown>) => void) => Promise<T>,
  ): Promise<T> {
    if (!this.accepting) throw new VoxError('overloaded', 'The server is shutting down.', { retryAfterSeconds: 5 });
    const lane = this.lane(audioSeconds);
    const queue = this.lanes.get(`${operation}/${lane}`)!;
    // Full = every slot busy and the waiting room full (a limit of 0 means: run now or refuse).
    if (queue.pending >= this.options.concurrency && queue.size >= this.options.queueLimit) {
      throw new VoxError('overloaded', `Too many ${operation} requests are waiting; retry shortly.`, {
        retryAfterSeconds: lane === 'short' ? 2 : 30,
      });
    }
    signal?.throwIfAborted();
    return new Promise<T>((resolve, reject) => {
      let started = false;
      // A job still waiting is dropped at once; a running one is stopped by the engine through the same signal.
      const onAbort = (): void => {
        if (!started) reject(new VoxError('aborted', 'The request was cancelled.'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      void queue.add(async () => {
        if (signal?.aborted) return;
        started = true;
        let rest: Promise<unknown> | undefined;
        try {
          resolve(
            await work(signal, (promise) => {
              rest = promise;
            }),
          );
        } catch (error) {
          reject(error);
        } finally {
          signal?.removeEventListener('abort', onAbort);
        }
        if (rest) await rest.catch(() => undefined);
      });
    });
  }

  /** Whether work of this length would start at once (a free slot, nobody waiting): optional work runs only then. */
  hasFreeSlot(operation: Operation, audioSeconds: number): boolean {
    const queue = this.lanes.get(`${operation}/${this.lane(audioSeconds)}`)!;
    return this.accepting && queue.pending < this.options.concurrency && queue.size === 0;
  }

  private lane(audioSeconds: number): Lane {
    return audioSeconds <= this.options.shortJobSeconds ? 'short' : 'long';
  }

  /** Stops admitting and waits for queued and running jobs to finish. */
  async drain(): Promise<void> {
    this.accepting = false;
    await Promise.all([...this.lanes.values()].map((queue) => queue.onIdle()));
  }
}

/**
 * The job worker: claims jobs of the operations it serves, runs them through the same operation runners as synchronous
 * requests, keeps its lease alive while it works (a worker that dies loses its jobs to the next claim), stops a job
 * whose cancellation was requested, and settles each job once.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { pipeline } from 'node:stream/promises';
import type { BaseLogger } from 'pino';
import { contentTypes } from '../audio/encode.js';
import { VoxError } from '../core/errors.js';
import type { FileService } from '../files/service.js';
import type { Metrics } from '../core/metrics.js';
import type { InputFile, OperationContext, OperationResult, Progress } from '../core/operation-context.js';
import type { OperationRunner, RunnerName } from '../operations/runners.js';
import type { LocalFile, Scratch, Store } from '../storage/store.js';
import type { ApiKeyRecord, JobRecord, Operation } from '../core/records.js';
import { PollLoop } from './poll-loop.js';
import { cancelledError, jobError, type JobService } from './service.js';

export interface JobWorkerOptions {
  store: Store;
  scratch: Scratch;
  files: FileService;
  jobs: JobService;
  runners: Record<RunnerName, OperationRunner>;
  /** Operations this worker takes. */
  operations: readonly Operation[];
  /** Jobs of one operation this worker runs at once. */
  concurrency: number;
  leaseSeconds: number;
  /** Lease renewal, progress write and cancellation check interval. */
  heartbeatMilliseconds: number;
  /** How often to look for jobs submitted through other processes. */
  pollMilliseconds: number;
  /** How long a settled job's results stay downloadable. */
  resultTtlSeconds: number;
  log: BaseLogger & { child(bindings: Record<string, unknown>): BaseLogger };
  metrics: Metrics;
  /** Called when a job settles (a webhook may be due). */
  onSettled?: () => void;
}

const extensions: Record<string, string> = {
  ...Object.fromEntries(Object.entries(contentTypes).map(([format, type]) => [type, format])),
  'application/zip': 'zip',
};
/** Why a running job's signal was aborted by the worker itself. */
class JobInterruption extends VoxError {
  constructor(
    readonly kind: 'cancelled' | 'released' | 'lease-lost',
    message: string,
  ) {
    super('aborted', message);
  }
}
const cancelled = (): JobInterruption => new JobInterruption('cancelled', 'The job was cancelled.');
const released = (): JobInterruption => new JobInterruption('released', 'The worker is stopping; the job goes back to the queue.');
const leaseLost = (): JobInterruption => new JobInterruption('lease-lost', 'The lease on this job was lost (another worker took it over).');

export class JobWorker {
  readonly workerId = `wrk_${hostname().slice(0, 20)}_${process.pid}_${randomUUID().slice(0, 8)}`;
  private readonly running = new Map<string, { operation: Operation; controller: AbortController; done: Promise<void> }>();
  private readonly loop = new PollLoop(() => this.claim());
  private stopped = true;

  constructor(private readonly options: JobWorkerOptions) {}

  start(): void {
    this.stopped = false;
    this.loop.start();
  }

  /** A job was submitted in this process: look now instead of at the next poll. */
  wake(): void {
    this.loop.wakeIn(0);
  }

  /** Stops a job this worker runs whose cancellation was just requested (other workers see it at their next heartbeat). */
  cancel(jobId: string): void {
    this.running.get(jobId)?.controller.abort(cancelled());
  }

  /** Stops claiming and waits for running jobs; `abort` (the grace period's end) stops them and gives them back to the queue. */
  async stop(abort: AbortSignal): Promise<void> {
    this.stopped = true;
    await this.loop.stop();
    const onAbort = (): void => {
      for (const { controller } of this.running.values()) controller.abort(released());
    };
    if (abort.aborted) onAbort();
    else abort.addEventListener('abort', onAbort, { once: true });
    await Promise.allSettled([...this.running.values()].map((job) => job.done));
    abort.removeEventListener('abort', onAbort);
  }

  /** Claims jobs while this worker has free slots; returns the delay until the next look. */
  private async claim(): Promise<number> {
    try {
      for (;;) {
        if (this.stopped) break;
        const free = this.options.operations.filter(
          (op) => [...this.running.values()].filter((job) => job.operation === op).length < this.options.concurrency,
        );
        if (free.length === 0) break;
        const now = Date.now();
        const { claimed, abandoned } = await this.options.store.jobs.claim(
          free,
          this.workerId,
          new Date(now).toISOString(),
          this.leaseUntil(now),
        );
        for (const job of abandoned) await this.abandon(job);
        if (!claimed) break;
        this.begin(claimed);
      }
    } catch (error) {
      this.options.log.error({ err: error }, 'job worker: claiming failed');
    }
    return this.options.pollMilliseconds;
  }

  private leaseUntil(now = Date.now()): string {
    return new Date(now + this.options.leaseSeconds * 1000).toISOString();
  }

  /** A job whose worker died once too often (or that was cancelled while its worker was gone) is settled here. */
  private async abandon(job: JobRecord): Promise<void> {
    const outcome = job.cancelRequested
      ? { status: 'cancelled' as const, error: cancelledError() }
      : {
          status: 'failed' as const,
          error: {
            code: 'internal',
            type: 'server_error',
            message:
              `The worker running this job stopped (a crash or a kill) during ` +
              `${job.attempts === 1 ? 'its only attempt' : `all ${job.attempts} attempts`}; it is not retried.`,
            param: null,
          },
        };
    if (await this.options.jobs.settle(job, job.workerId, outcome)) {
      this.options.log.warn({ job_id: job.id, attempts: job.attempts, status: outcome.status }, 'job abandoned by its worker settled');
      this.options.onSettled?.();
    }
  }

  private begin(job: JobRecord): void {
    const controller = new AbortController();
    const done = this.execute(job, controller)
      .catch((error: unknown) => this.options.log.error({ err: error, job_id: job.id }, 'job bookkeeping failed'))
      .finally(() => {
        this.running.delete(job.id);
        this.loop.wakeIn(0);
      });
    this.running.set(job.id, { operation: job.operation, controller, done });
  }

  private async execute(job: JobRecord, controller: AbortController): Promise<void> {
    const log = this.options.log.child({ job_id: job.id, op: job.operation, attempt: job.attempts });
    log.info({ route: job.route, input_seconds: job.inputSeconds }, 'job started');
    if (job.attempts === 1)
      this.options.metrics.jobQueueSeconds.observe(
        { operation: job.operation },
        (Date.parse(job.startedAt ?? job.createdAt) - Date.parse(job.createdAt)) / 1000,
      );
    let progress: Progress | null = null;
    let reported = '';
    const heartbeat = setInterval(() => {
      const update = JSON.stringify(progress) === reported ? null : progress;
      reported = JSON.stringify(progress);
      this.options.store.jobs.heartbeat(job.id, this.workerId, this.leaseUntil(), update).then(
        ({ owned, cancelRequested }) => {
          if (!owned) controller.abort(leaseLost());
          else if (cancelRequested) controller.abort(cancelled());
        },
        (error: unknown) => log.warn({ err: error }, 'job heartbeat failed'),
      );
    }, this.options.heartbeatMilliseconds);
    const locals: LocalFile[] = [];
    try {
      const owner = await this.options.store.keys.get(job.ownerKeyId);
      if (!owner) throw new VoxError('unauthorized', 'The API key that created this job no longer exists.');
      const inputs = new Map<string, InputFile[]>();
      for (const input of job.inputs) {
        const local = await this.options.store.blobs.localFile(input.blobKey, this.options.scratch);
        locals.push(local);
        inputs.set(input.field, [
          ...(inputs.get(input.field) ?? []),
          { field: input.field, path: local.path, filename: input.filename, mimetype: '', bytes: input.bytes },
        ]);
      }
      const context: OperationContext = {
        requestId: job.id,
        apiKey: owner,
        signal: controller.signal,
        inputs,
        log,
        resultTtlSeconds: this.options.resultTtlSeconds,
        onProgress: (update) => (progress = update),
      };
      const runner = this.options.runners[job.route as RunnerName];
      if (!runner) throw new VoxError('internal', `Unknown job route '${job.route}'.`);
      const output = await runner.run(job.params, context);
      const result = await this.keepResult(output, owner, runner.operation, controller.signal);
      if (controller.signal.aborted) throw controller.signal.reason;
      await this.finish(job, { status: 'succeeded', result }, log);
    } catch (caught) {
      const reason = controller.signal.aborted ? controller.signal.reason : caught;
      const kind = reason instanceof JobInterruption ? reason.kind : undefined;
      if (kind === 'lease-lost') {
        log.warn('job lease lost: leaving the job to the worker that took it');
      } else if (kind === 'released' || (kind === undefined && reason instanceof VoxError && reason.code === 'overloaded')) {
        // Stopping, or every slot of the operation taken by synchronous requests: the job waits in the queue instead.
        await this.options.store.jobs.release(job.id, this.workerId);
        log.info({ reason: (reason as Error).message }, 'job released back to the queue');
      } else if (kind === 'cancelled') {
        await this.finish(job, { status: 'cancelled', error: cancelledError() }, log);
      } else {
        const error = reason instanceof VoxError ? reason : new VoxError('internal', 'Internal server error.', { cause: reason });
        if (error.status >= 500) log.error({ err: reason }, 'job failed');
        await this.finish(job, { status: 'failed', error: jobError(error) }, log);
      }
    } finally {
      clearInterval(heartbeat);
      await Promise.all(locals.map((local) => local.release()));
    }
  }

  private async finish(job: JobRecord, outcome: Parameters<JobService['settle']>[2], log: BaseLogger): Promise<void> {
    const settled = await this.options.jobs.settle(job, this.workerId, outcome);
    if (!settled) {
      log.warn({ status: outcome.status }, 'job was settled elsewhere (lease lost): this outcome is dropped');
      return;
    }
    this.options.metrics.jobsSettled.inc({ operation: job.operation, status: settled.status });
    log.info(
      { status: settled.status, elapsed_ms: Date.parse(settled.finishedAt!) - Date.parse(settled.startedAt ?? settled.createdAt) },
      'job settled',
    );
    this.options.onSettled?.();
  }

  /**
   * What the synchronous call would have answered, as JSON: a JSON body as it is; text inline; audio and archives as a
   * result file (a download URL), since a job's result must outlive the connection.
   */
  private async keepResult(output: OperationResult, owner: ApiKeyRecord, operation: Operation, signal: AbortSignal): Promise<unknown> {
    switch (output.kind) {
      case 'json':
        return output.body;
      case 'text':
        return { object: 'text', content_type: output.contentType, text: output.body };
      case 'audio':
      case 'stream': {
        const type = output.contentType.split(';')[0]!.trim();
        const scratch = this.options.scratch.path(`-result.${extensions[type] ?? 'bin'}`);
        try {
          if (output.kind === 'audio') await writeFile(scratch, output.bytes);
          else await pipeline(output.stream, createWriteStream(scratch), { signal });
          const file = await this.options.files.keep(
            owner,
            scratch,
            `${operation}.${extensions[type] ?? 'bin'}`,
            type,
            this.options.resultTtlSeconds,
          );
          return {
            object: 'file',
            id: file.id,
            url: `/v1/audio/files/${file.id}`,
            content_type: type,
            bytes: file.bytes,
            expires_at: file.expiresAt,
            ...(output.headers && Object.keys(output.headers).length > 0 ? { headers: output.headers } : {}),
          };
        } finally {
          await rm(scratch, { force: true });
        }
      }
    }
  }
}

/**
 * Jobs: an operation call accepted now and run by a worker (in this process or another one). The job row and its input
 * blobs are committed before the caller hears of the job; a job settles once, and its webhook delivery is recorded in the
 * same transaction as its final state.
 */
import { randomUUID } from 'node:crypto';
import { mayAccess } from '../auth/api-keys.js';
import { admitAudio, uploadedFile, type AudioLimits } from '../audio/input.js';
import { errorCatalogue, VoxError, type ErrorCode } from '../core/errors.js';
import type { OperationContext, OperationResult } from '../core/operation-context.js';
import type { OperationRunner, RunnerName } from '../operations/runners.js';
import type { JobListQuery, JobOutcome, Store } from '../storage/store.js';
import type { ApiKeyRecord, FinalJobStatus, JobError, JobInput, JobRecord, Operation, WebhookDeliveryRecord } from '../core/records.js';
import type { PronunciationDictionaryService } from '../lexicons/service.js';
import type { VoiceService } from '../voices/service.js';
import { checkWebhookUrl, type WebhookAddressPolicy } from './webhook-address.js';

export const jobEvents: Record<FinalJobStatus, string> = { succeeded: 'job.succeeded', failed: 'job.failed', cancelled: 'job.cancelled' };
const finalStatuses: ReadonlySet<string> = new Set(Object.keys(jobEvents));
export const isFinal = (job: JobRecord): boolean => finalStatuses.has(job.status);

export interface JobServiceOptions {
  store: Store;
  voices: VoiceService;
  dictionaries: PronunciationDictionaryService;
  runners: Record<RunnerName, OperationRunner>;
  limits: AudioLimits;
  /** Inputs, results and the job record are deleted this long after the job settles. */
  ttlSeconds: number;
  /** Attempts a job gets when its worker dies under it (a crash, SIGKILL, a lost lease). */
  maxAttempts: number;
  webhookPolicy: WebhookAddressPolicy;
  /** Called after a job is committed, so a worker in this process starts it without waiting for its next poll. */
  onSubmitted?: (operation: Operation) => void;
  /** Called when a running job is marked for cancellation, so a worker in this process stops it without waiting for its heartbeat. */
  onCancelRequested?: (jobId: string) => void;
}

export interface JobView {
  id: string;
  object: 'job';
  operation: Operation;
  status: JobRecord['status'];
  progress: JobRecord['progress'];
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** When the job, its inputs and results are deleted: set once it settles. */
  expires_at: string | null;
  attempts: number;
  cancel_requested: boolean;
  input: { filename: string | null; bytes: number; duration_seconds: number | null };
  result: unknown;
  error: (JobError & { job_id: string }) | null;
  webhook: {
    url: string;
    deliveries: Array<{
      id: string;
      event: string;
      status: string;
      attempts: Array<{ at: string; status: number | null; error: string | null; duration_ms: number }>;
    }>;
  } | null;
  links: { self: string; events: string; cancel: string };
}

export interface JobPage {
  object: 'list';
  data: JobView[];
  has_more: boolean;
  /** Pass as `cursor` for the next (older) page. */
  next_cursor: string | null;
}

const notFound = (id: string): VoxError => new VoxError('not_found', `No job '${id}'.`, { param: 'job_id' });
const encodeCursor = (job: JobRecord): string => Buffer.from(JSON.stringify([job.createdAt, job.id])).toString('base64url');

function decodeCursor(cursor: string): { createdAt: string; id: string } {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt === 'string' && typeof id === 'string') return { createdAt, id };
  } catch {
    // Reported below as the client's mistake.
  }
  throw new VoxError('invalid_request', 'Invalid cursor: pass next_cursor from the previous page as it is.', { param: 'cursor' });
}

export class JobService {
  constructor(private readonly options: JobServiceOptions) {}

  /**
   * Checks what can be checked before running (audio readable and within limits, the named voice visible to the caller,
   * the webhook URL), stores the inputs, commits the job. `context.inputs` are the request's uploads, moved into the
   * blob store.
   */
  async submit(
    runnerName: RunnerName,
    params: Record<string, unknown>,
    context: OperationContext,
    webhookUrl: string | undefined,
  ): Promise<JobRecord> {
    const runner = this.options.runners[runnerName];
    if (webhookUrl !== undefined) await checkWebhookUrl(webhookUrl, this.options.webhookPolicy);
    const voice = runner.voiceOf?.(params);
    if (voice !== undefined) await this.options.voices.speechProfile(voice.voiceId, context.apiKey, voice.param);
    const speakerVoices = runner.speakerVoicesOf?.(params) ?? [];
    if (speakerVoices.length > 0) await this.options.voices.identificationProfiles(speakerVoices, context.apiKey);
    await this.options.dictionaries.rules(runner.dictionariesOf?.(params) ?? [], context.apiKey);
    await runner.admit?.(params, context.apiKey);
    let inputSeconds: number | null = null;
    for (const field of runner.audioFields) {
      const admitted = await admitAudio(uploadedFile(context.inputs, field), this.options.limits, context.signal);
      inputSeconds = Number.isFinite(admitted.durationSeconds) ? admitted.durationSeconds : null;
    }
    const id = `job_${randomUUID().replaceAll('-', '')}`;
    const inputs: JobInput[] = [];
    // Blobs first, then the row: a crash in between leaves blobs nothing points at, never a job without its input.
    for (const [field, files] of context.inputs) {
      for (const [index, file] of files.entries()) {
        const blobKey = `jobs/${id}/${field}-${index}`;
        const bytes = await this.options.store.blobs.putFile(blobKey, file.path);
        inputs.push({ field, blobKey, filename: file.filename, bytes });
      }
    }
    const now = new Date();
    const job: JobRecord = {
      id,
      ownerKeyId: context.apiKey.id,
      operation: runner.operation,
      route: runnerName,
      status: 'queued',
      params,
      inputs,
      inputSeconds,
      progress: null,
      result: null,
      error: null,
      webhookUrl: webhookUrl ?? null,
      attempts: 0,
      maxAttempts: this.options.maxAttempts,
      workerId: null,
      leaseExpiresAt: null,
      cancelRequested: false,
      createdAt: now.toISOString(),
      startedAt: null,
      finishedAt: null,
      // Until it settles, a job is kept however long it waits; the TTL runs from the end.
      expiresAt: new Date(now.getTime() + 3650 * 86400_000).toISOString(),
    };
    await this.options.store.jobs.insert(job);
    this.options.onSubmitted?.(job.operation);
    return job;
  }

  /** The caller's job (any job for an admin key); another key's job is a 404 like an unknown one. */
  async record(id: string, caller: ApiKeyRecord): Promise<JobRecord> {
    const job = await this.options.store.jobs.get(id);
    if (!job || !mayAccess(caller, job.ownerKeyId)) throw notFound(id);
    return job;
  }

  async get(id: string, caller: ApiKeyRecord): Promise<JobView> {
    return this.view(await this.record(id, caller));
  }

  async list(
    filter: { status?: JobRecord['status']; operation?: Operation; limit?: number; cursor?: string },
    caller: ApiKeyRecord,
  ): Promise<JobPage> {
    const limit = filter.limit ?? 20;
    const query: JobListQuery = {
      ...(caller.scopes.includes('admin') ? {} : { ownerKeyId: caller.id }),
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.operation ? { operation: filter.operation } : {}),
      ...(filter.cursor ? { before: decodeCursor(filter.cursor) } : {}),
      limit: limit + 1,
    };
    const jobs = await this.options.store.jobs.list(query);
    const page = jobs.slice(0, limit);
    const last = page.at(-1);
    return {
      object: 'list',
      data: await Promise.all(page.map((job) => this.view(job))),
      has_more: jobs.length > limit,
      next_cursor: jobs.length > limit && last ? encodeCursor(last) : null,
    };
  }

  /** A queued job is cancelled at once; a running one is marked and its worker stops it (within about a second). */
  async cancel(id: string, caller: ApiKeyRecord): Promise<JobView> {
    const job = await this.record(id, caller);
    if (isFinal(job)) return this.view(job);
    const marked = await this.options.store.jobs.requestCancel(id);
    if (marked?.status === 'running') this.options.onCancelRequested?.(id);
    if (marked?.status === 'queued') {
      const settled = await this.settle(marked, null, { status: 'cancelled', error: cancelledError() });
      if (settled) return this.view(settled);
    }
    return this.view((await this.options.store.jobs.get(id)) ?? job);
  }

  /**
   * Runs an operation as a job and waits for it, answering as the synchronous call would (an API-only node has no
   * engines: its synchronous calls run on workers). The caller going away cancels the job.
   */
  async runAndWait(
    runnerName: RunnerName,
    params: Record<string, unknown>,
    context: OperationContext,
    pollMilliseconds = 100,
  ): Promise<OperationResult> {
    const submitted = await this.submit(runnerName, params, context, undefined);
    const onAbort = (): void => void this.cancel(submitted.id, context.apiKey).catch(() => undefined);
    context.signal.addEventListener('abort', onAbort, { once: true });
    try {
      let job = submitted;
      while (!isFinal(job)) {
        await new Promise((resolve) => setTimeout(resolve, pollMilliseconds));
        job = (await this.options.store.jobs.get(job.id)) ?? job;
      }
      return await this.asResult(job);
    } finally {
      context.signal.removeEventListener('abort', onAbort);
    }
  }

  /** A settled job as the synchronous call's answer: its body, its text, or its result file with the call's headers. */
  private async asResult(job: JobRecord): Promise<OperationResult> {
    if (job.status !== 'succeeded') {
      const error = job.error ?? cancelledError();
      throw new VoxError(
        (error.code in errorCatalogue ? error.code : 'aborted') as ErrorCode,
        error.message,
        error.param ? { param: error.param } : {},
      );
    }
    const result = job.result as { object?: string; id?: string; content_type?: string; text?: string; headers?: Record<string, string> };
    if (result.object === 'text') return { kind: 'text', body: result.text ?? '', contentType: result.content_type ?? 'text/plain' };
    if (result.object !== 'file') return { kind: 'json', body: result };
    const file = await this.options.store.files.get(result.id ?? '');
    if (!file) throw new VoxError('internal', `The result file of job ${job.id} is missing.`);
    return {
      kind: 'stream',
      stream: await this.options.store.blobs.readStream(file.blobKey),
      contentType: file.contentType,
      headers: { ...result.headers, 'content-length': String(file.bytes) },
    };
  }

  /** Snapshots of a job whenever it changes (status, progress, attempts), ending with its final state. */
  async *watch(id: string, caller: ApiKeyRecord, signal: AbortSignal, pollMilliseconds = 250): AsyncGenerator<JobView> {
    let job = await this.record(id, caller);
    let last = '';
    for (;;) {
      const fingerprint = JSON.stringify([job.status, job.progress, job.attempts, job.cancelRequested]);
      if (fingerprint !== last) {
        last = fingerprint;
        yield await this.view(job);
      }
      if (isFinal(job) || signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, pollMilliseconds));
      job = (await this.options.store.jobs.get(id)) ?? job;
    }
  }

  /**
   * Settles a job once (while `workerId` holds it, or while it is queued for `null`), recording its webhook delivery
   * in the same transaction. Returns undefined when someone else settled it first or the lease was lost.
   */
  async settle(job: JobRecord, workerId: string | null, outcome: JobOutcome): Promise<JobRecord | undefined> {
    const now = new Date();
    const finished: JobRecord = {
      ...job,
      status: outcome.status,
      result: outcome.result ?? null,
      error: outcome.error ?? null,
      finishedAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + this.options.ttlSeconds * 1000).toISOString(),
    };
    const delivery = job.webhookUrl ? this.delivery(finished, job.webhookUrl, now) : undefined;
    return this.options.store.jobs.finish(job.id, workerId, outcome, finished.finishedAt!, finished.expiresAt, delivery);
  }

  /** Deletes settled jobs past their expiry with their inputs (results are files with the same expiry). */
  async sweep(now = new Date()): Promise<number> {
    const expired = await this.options.store.jobs.expired(now.toISOString());
    for (const job of expired) {
      await this.options.store.blobs.delete(`jobs/${job.id}`);
      await this.options.store.jobs.delete(job.id);
    }
    return expired.length;
  }

  async view(job: JobRecord): Promise<JobView> {
    const deliveries = job.webhookUrl ? await this.options.store.webhooks.forJob(job.id) : [];
    return this.render(job, deliveries);
  }

  private render(job: JobRecord, deliveries: WebhookDeliveryRecord[]): JobView {
    const audio = job.inputs[0];
    const self = `/v1/jobs/${job.id}`;
    return {
      id: job.id,
      object: 'job',
      operation: job.operation,
      status: job.status,
      progress: job.progress,
      created_at: job.createdAt,
      started_at: job.startedAt,
      finished_at: job.finishedAt,
      expires_at: isFinal(job) ? job.expiresAt : null,
      attempts: job.attempts,
      cancel_requested: job.cancelRequested,
      input: {
        filename: audio?.filename ?? null,
        bytes: job.inputs.reduce((sum, input) => sum + input.bytes, 0),
        duration_seconds: job.inputSeconds,
      },
      result: job.status === 'succeeded' ? job.result : null,
      error: job.error ? { ...job.error, job_id: job.id } : null,
      webhook: job.webhookUrl
        ? {
            url: job.webhookUrl,
            deliveries: deliveries.map((d) => ({
              id: d.id,
              event: d.event,
              status: d.status,
              attempts: d.attempts.map((a) => ({ at: a.at, status: a.status, error: a.error, duration_ms: a.durationMs })),
            })),
          }
        : null,
      links: { self, events: `${self}/events`, cancel: self },
    };
  }

  /** The one delivery of a job's final state; its id (the webhook-id) is derived from the job, so it can exist only once. */
  private delivery(finished: JobRecord, url: string, now: Date): WebhookDeliveryRecord {
    const event = jobEvents[finished.status as FinalJobStatus];
    const payload = JSON.stringify({ type: event, timestamp: now.toISOString(), data: this.render(finished, []) });
    return {
      id: `msg_${finished.id.slice(4)}`,
      jobId: finished.id,
      ownerKeyId: finished.ownerKeyId,
      url,
      event,
      payload,
      status: 'pending',
      attempts: [],
      nextAttemptAt: now.toISOString(),
      createdAt: now.toISOString(),
    };
  }
}

export const cancelledError = (): JobError => ({
  code: 'cancelled',
  type: 'invalid_request_error',
  message: 'The job was cancelled.',
  param: null,
});

export function jobError(error: VoxError): JobError {
  return {
    code: error.code,
    type: error.type,
    message: error.code === 'internal' ? 'Internal server error.' : error.message,
    param: error.param,
  };
}

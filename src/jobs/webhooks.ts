/**
 * Webhook delivery per Standard Webhooks: signed with the job owner's secret, retried with exponential backoff and jitter
 * for a configurable window, every attempt recorded. Deliveries are rows, so they survive restarts, and any process may
 * send them: each is claimed under a short lease first.
 */
import { Webhook } from 'standardwebhooks';
import type { Agent } from 'undici';
import type { BaseLogger } from 'pino';
import type { Metrics } from '../core/metrics.js';
import type { Store } from '../storage/store.js';
import type { WebhookAttempt, WebhookDeliveryRecord } from '../core/records.js';
import { PollLoop } from './poll-loop.js';
import { guardedAgent, type WebhookAddressPolicy } from './webhook-address.js';

export interface WebhookSenderOptions {
  store: Store;
  policy: WebhookAddressPolicy;
  /** First retry delay; each next one doubles (capped at an hour), with +-20% jitter. */
  retryBaseMilliseconds: number;
  /** No attempt starts later than this after the delivery was created. */
  retryWindowSeconds: number;
  timeoutMilliseconds: number;
  log: Pick<BaseLogger, 'info' | 'warn' | 'error'>;
  metrics?: Metrics;
  /** How often to look for due deliveries made by other processes. */
  pollMilliseconds?: number;
}

const maxRetryDelayMilliseconds = 3600_000;
const sendBatch = 8;

/** Delay before attempt `n + 1` after `n` failed attempts. */
export function retryDelayMilliseconds(failedAttempts: number, baseMilliseconds: number, random = Math.random): number {
  const delay = Math.min(baseMilliseconds * 2 ** Math.max(0, failedAttempts - 1), maxRetryDelayMilliseconds);
  return Math.round(delay * (0.8 + 0.4 * random()));
}

export class WebhookSender {
  /** Made at the first attempt (guardedAgent loads undici). */
  private agent: Promise<Agent> | undefined;
  private readonly loop = new PollLoop(() => this.tick());
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: WebhookSenderOptions) {}

  start(): void {
    this.loop.start();
  }

  /** Sends what is due now (e.g. a job just settled in this process). */
  wake(): void {
    this.loop.wakeIn(0);
  }

  /** Stops sending; attempts under way finish (each is bounded by the timeout). */
  async stop(): Promise<void> {
    await this.loop.stop();
    await Promise.allSettled(this.inFlight);
    await (await this.agent)?.close();
  }

  /** Sends what is due; returns the delay until the next look. */
  private async tick(): Promise<number> {
    const poll = this.options.pollMilliseconds ?? 1000;
    try {
      const now = Date.now();
      const leaseUntil = new Date(now + this.options.timeoutMilliseconds + 5000).toISOString();
      const due = await this.options.store.webhooks.claimDue(new Date(now).toISOString(), leaseUntil, sendBatch);
      for (const delivery of due) {
        const attempt = this.attempt(delivery).catch((error: unknown) =>
          this.options.log.error({ err: error, webhook_id: delivery.id }, 'webhook delivery bookkeeping failed'),
        );
        this.inFlight.add(attempt);
        void attempt.finally(() => this.inFlight.delete(attempt));
      }
      if (due.length === sendBatch) return 0;
      const next = await this.options.store.webhooks.nextDue();
      return next === undefined ? poll : Math.max(0, Math.min(poll, Date.parse(next) - Date.now()));
    } catch (error) {
      this.options.log.error({ err: error }, 'webhook sender: looking for due deliveries failed');
      return poll;
    }
  }

  private async attempt(delivery: WebhookDeliveryRecord): Promise<void> {
    const owner = await this.options.store.keys.get(delivery.ownerKeyId);
    const startedAt = Date.now();
    let status: number | null = null;
    let error: string | null = null;
    if (!owner) {
      error = 'the API key that created the job no longer exists';
    } else {
      try {
        const timestamp = new Date();
        const signature = new Webhook(owner.webhookSecret).sign(delivery.id, timestamp, delivery.payload);
        this.agent ??= guardedAgent(this.options.policy);
        const [{ request }, agent] = await Promise.all([import('undici'), this.agent]);
        const response = await request(delivery.url, {
          method: 'POST',
          dispatcher: agent,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'voxd-webhooks',
            'webhook-id': delivery.id,
            'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
            'webhook-signature': signature,
          },
          body: delivery.payload,
          signal: AbortSignal.timeout(this.options.timeoutMilliseconds),
        });
        status = response.statusCode;
        await response.body.dump();
        // Redirects are not followed: the receiver's answer is the one it gave.
        if (status < 200 || status > 299) error = `answered HTTP ${status}`;
      } catch (caught) {
        const cause = (caught as { cause?: { message?: string } }).cause;
        error = cause?.message ?? (caught as Error).message;
      }
    }
    const attempt: WebhookAttempt = { at: new Date(startedAt).toISOString(), status, error, durationMs: Date.now() - startedAt };
    const attempts = delivery.attempts.length + 1;
    this.options.metrics?.webhookAttempts.inc({ outcome: error === null ? 'delivered' : 'failed' });
    if (error === null) {
      await this.options.store.webhooks.recordAttempt(delivery.id, attempt, 'delivered', attempt.at);
      this.options.log.info({ webhook_id: delivery.id, job_id: delivery.jobId, status, attempts }, 'webhook delivered');
      return;
    }
    const nextAt = Date.now() + retryDelayMilliseconds(attempts, this.options.retryBaseMilliseconds);
    const giveUp = !owner || nextAt > Date.parse(delivery.createdAt) + this.options.retryWindowSeconds * 1000;
    await this.options.store.webhooks.recordAttempt(
      delivery.id,
      attempt,
      giveUp ? 'failed' : 'pending',
      new Date(giveUp ? Date.now() : nextAt).toISOString(),
    );
    this.options.log.warn(
      { webhook_id: delivery.id, job_id: delivery.jobId, status, error, attempts, gave_up: giveUp },
      'webhook attempt failed',
    );
    if (!giveUp) this.loop.wakeIn(nextAt - Date.now());
  }
}

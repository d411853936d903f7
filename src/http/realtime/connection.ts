/**
 * What every realtime socket shares: messages handled one at a time in arrival order, inbound flow control, limits
 * (sessions per key, idle time, session length, message size), slow consumers, and close codes that say why.
 */
import { randomUUID } from 'node:crypto';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck, type ValueError } from '@sinclair/typebox/compiler';
import type { FastifyBaseLogger } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import { VoxError } from '../../core/errors.js';
import type { Metrics } from '../../core/metrics.js';
import { toVoxError } from '../errors.js';

/** Close codes (4000-4999 are the application's; the last three digits follow HTTP). */
export const closeCodes = {
  normal: 1000,
  goingAway: 1001,
  /** The client does not read what the server sends. */
  slowConsumer: 1008,
  internal: 1011,
  idle: 4408,
  sessionExpired: 4410,
  tooManySessions: 4429,
} as const;

export interface ConnectionLimits {
  sessionsPerKey: number;
  idleSeconds: number;
  maxSessionSeconds: number;
  maxMessageBytes: number;
}

/** Unread server output beyond this closes the session: memory per session stays bounded. */
const maxBufferedBytes = 4 * 1024 * 1024;
/** Client input waiting to be handled beyond this pauses reading the socket (TCP pushes back on the client). */
const pauseAboveBytes = 8 * 1024 * 1024;

export const newEventId = (): string => `event_${randomUUID().replaceAll('-', '').slice(0, 20)}`;

/** Open sessions per key, across the socket kinds of one process. */
export class SessionCounter {
  private readonly open = new Map<string, number>();

  tryOpen(keyId: string, limit: number): boolean {
    const current = this.open.get(keyId) ?? 0;
    if (current >= limit) return false;
    this.open.set(keyId, current + 1);
    return true;
  }

  release(keyId: string): void {
    const left = (this.open.get(keyId) ?? 1) - 1;
    if (left <= 0) this.open.delete(keyId);
    else this.open.set(keyId, left);
  }
}

/** What the sockets of one process share. */
export interface RealtimeShared {
  limits: ConnectionLimits;
  counter: SessionCounter;
  metrics: Metrics;
}

export interface ConnectionOptions {
  kind: string;
  socket: WebSocket;
  keyId: string;
  shared: RealtimeShared;
  log: FastifyBaseLogger;
  /** One client message (text or binary); a thrown VoxError becomes an `error` event and the session goes on. */
  onMessage: (data: Buffer, isBinary: boolean) => Promise<void>;
  /** The error event in the socket's protocol. */
  errorEvent: (error: VoxError, clientEventId: string | null) => Record<string, unknown>;
  onClose: () => void;
}

export class RealtimeConnection {
  readonly expiresAt: number;
  private queue: Promise<void> = Promise.resolve();
  private pendingBytes = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly sessionTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly admitted: boolean;

  constructor(private readonly options: ConnectionOptions) {
    const { socket, kind } = options;
    const { limits } = options.shared;
    this.expiresAt = Math.floor(Date.now() / 1000) + limits.maxSessionSeconds;
    this.admitted = options.shared.counter.tryOpen(options.keyId, limits.sessionsPerKey);
    socket.on('close', (code) => this.cleanUp(code));
    if (!this.admitted) {
      this.fail(
        new VoxError(
          'rate_limited',
          `This key already has ${limits.sessionsPerKey} realtime sessions open (VOXD_REALTIME_SESSIONS_PER_KEY).`,
        ),
        closeCodes.tooManySessions,
        'too many sessions for this key',
      );
      return;
    }
    options.shared.metrics.realtimeSessions.inc({ kind });
    this.sessionTimer = setTimeout(
      () =>
        this.fail(
          new VoxError(
            'request_timeout',
            `The session reached its time limit of ${limits.maxSessionSeconds} s (VOXD_REALTIME_MAX_SESSION_SECONDS).`,
          ),
          closeCodes.sessionExpired,
          'session time limit reached',
        ),
      limits.maxSessionSeconds * 1000,
    );
    this.touch();
    socket.on('message', (data: RawData, isBinary: boolean) => this.receive(toBuffer(data), isBinary));
  }

  get open(): boolean {
    return this.admitted && !this.closed;
  }

  /** Runs `step` after every message received before it (e.g. the session's setup, before any message). */
  enqueue(step: () => Promise<void>): void {
    this.queue = this.queue.then(step).catch((error: unknown) => this.reportError(error, null));
  }

  /** Sends a JSON event (with an event_id); a client that stopped reading is disconnected instead of buffered for. */
  send(event: Record<string, unknown>): void {
    if (this.closed || this.options.socket.readyState !== this.options.socket.OPEN) return;
    if (this.options.socket.bufferedAmount > maxBufferedBytes) {
      this.close(closeCodes.slowConsumer, 'slow consumer: server events are not being read');
      return;
    }
    this.options.socket.send(JSON.stringify({ event_id: newEventId(), ...event }));
  }

  /** Sends binary data (audio); resolves when it is handed to the socket. */
  sendBinary(data: Buffer): boolean {
    if (!this.open) return false;
    if (this.options.socket.bufferedAmount > maxBufferedBytes) {
      this.close(closeCodes.slowConsumer, 'slow consumer: audio is not being read');
      return false;
    }
    this.options.socket.send(data, { binary: true });
    return true;
  }

  /** Bytes sent but not yet taken by the client's network: producers wait while this is high. */
  get bufferedBytes(): number {
    return this.options.socket.bufferedAmount;
  }

  reportError(error: unknown, clientEventId: string | null): void {
    const voxError = toVoxError(error);
    if (voxError.status >= 500) this.options.log.error({ err: error }, voxError.message);
    this.send(this.options.errorEvent(voxError, clientEventId));
  }

  /** An error event, then the close. */
  fail(error: VoxError, code: number, reason: string): void {
    this.send(this.options.errorEvent(error, null));
    this.close(code, reason);
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.options.socket.close(code, reason);
  }

  private receive(data: Buffer, isBinary: boolean): void {
    this.touch();
    if (data.length > this.options.shared.limits.maxMessageBytes) {
      this.reportError(
        new VoxError(
          'payload_too_large',
          `A message may hold at most ${this.options.shared.limits.maxMessageBytes} bytes (VOXD_REALTIME_MAX_MESSAGE_MB); this one has ` +
            `${data.length}: it was dropped.`,
        ),
        null,
      );
      return;
    }
    this.pendingBytes += data.length;
    if (this.pendingBytes > pauseAboveBytes) this.options.socket.pause();
    this.enqueue(async () => {
      try {
        if (this.open) await this.options.onMessage(data, isBinary);
      } finally {
        this.pendingBytes -= data.length;
        if (this.pendingBytes <= pauseAboveBytes / 2 && this.open) this.options.socket.resume();
      }
    });
  }

  private touch(): void {
    clearTimeout(this.idleTimer);
    const idleSeconds = this.options.shared.limits.idleSeconds;
    this.idleTimer = setTimeout(
      () =>
        this.fail(
          new VoxError('request_timeout', `No message for ${idleSeconds} s (VOXD_REALTIME_IDLE_SECONDS): the session is closed.`),
          closeCodes.idle,
          'idle timeout',
        ),
      idleSeconds * 1000,
    );
  }

  private cleanUp(code: number): void {
    this.closed = true;
    clearTimeout(this.idleTimer);
    clearTimeout(this.sessionTimer);
    if (!this.admitted) return;
    this.options.shared.counter.release(this.options.keyId);
    this.options.shared.metrics.realtimeSessions.dec({ kind: this.options.kind });
    this.options.shared.metrics.realtimeCloses.inc({ kind: this.options.kind, code: String(code) });
    this.options.onClose();
  }
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** The envelope's fields of an error (internal details hidden). */
export function errorFields(error: VoxError): Record<string, string | null> {
  return {
    type: error.type,
    code: error.code,
    message: error.code === 'internal' ? 'Internal server error.' : error.message,
    param: error.param,
  };
}

/** A parser of JSON client events by `type`, validated against their schemas; anything else is an error naming what is wrong. */
export function eventParser<T>(schemas: Record<string, TSchema>): (data: Buffer) => T {
  const validators = new Map<string, TypeCheck<TSchema>>(
    Object.entries(schemas).map(([type, schema]) => [type, TypeCompiler.Compile(schema)]),
  );
  return (data) => {
    let value: unknown;
    try {
      value = JSON.parse(data.toString('utf8'));
    } catch {
      throw new VoxError('invalid_request', 'The message is not valid JSON.');
    }
    const type = (value as { type?: unknown } | null)?.type;
    if (typeof type !== 'string')
      throw new VoxError('invalid_request', "A client event is a JSON object with a string 'type'.", { param: 'type' });
    const validator = validators.get(type);
    if (!validator)
      throw new VoxError(
        'invalid_request',
        `Unknown client event type '${type.slice(0, 80)}'. Known: ${[...validators.keys()].join(', ')}.`,
        { param: 'type' },
      );
    const problem = deepestError([...validator.Errors(value)]);
    if (problem) {
      const param = problem.path.replace(/^\//, '').replaceAll('/', '.');
      throw new VoxError('invalid_request', `${param || 'event'}: ${problem.message}.`, param ? { param } : {});
    }
    return value as T;
  };
}

/** The most specific problem: a union (e.g. null or an object) reports its own path, its variants the field inside. */
function deepestError(errors: ValueError[]): ValueError | undefined {
  const all = errors.flatMap(function expand(error): ValueError[] {
    return [error, ...error.errors.flatMap((variant) => [...variant].flatMap(expand))];
  });
  return all.reduce<ValueError | undefined>(
    (deepest, error) => (!deepest || error.path.length > deepest.path.length ? error : deepest),
    undefined,
  );
}

/** A realtime-socket client for tests and the realtime bench: events kept with their arrival time, audio streamed at real-time pace. */
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';

export interface ReceivedEvent {
  type: string;
  /** performance.now() when it arrived. */
  receivedAtMs: number;
  [field: string]: unknown;
}

export class RealtimeClient {
  readonly events: ReceivedEvent[] = [];
  readonly binary: Array<{ data: Buffer; receivedAtMs: number }> = [];
  closeCode: number | undefined;
  closeReason = '';
  private readonly waiters = new Set<() => void>();
  readonly closed: Promise<void>;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      const receivedAtMs = performance.now();
      if (isBinary) this.binary.push({ data, receivedAtMs });
      else this.events.push({ ...(JSON.parse(data.toString('utf8')) as { type: string }), receivedAtMs });
      for (const wake of this.waiters) wake();
    });
    this.closed = new Promise((resolve) =>
      socket.on('close', (code, reason) => {
        this.closeCode = code;
        this.closeReason = reason.toString('utf8');
        for (const wake of this.waiters) wake();
        resolve();
      }),
    );
  }

  /** Opens a socket; rejects with the HTTP status and body when the upgrade is refused. */
  static connect(url: string, options: { key?: string; protocols?: string[] } = {}): Promise<RealtimeClient> {
    const socket = new WebSocket(url, options.protocols ?? [], options.key ? { headers: { authorization: `Bearer ${options.key}` } } : {});
    return new Promise((resolve, reject) => {
      const client = new RealtimeClient(socket);
      socket.once('open', () => resolve(client));
      socket.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        response.on('end', () =>
          reject(Object.assign(new Error(`upgrade refused: ${response.statusCode}`), { status: response.statusCode, body })),
        );
      });
      socket.once('error', reject);
    });
  }

  send(event: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(event));
  }

  /** The first event (from index `from`) of this type that passes `where`. */
  async waitFor(
    type: string,
    options: { where?: (event: ReceivedEvent) => boolean; timeoutMs?: number; from?: number } = {},
  ): Promise<ReceivedEvent> {
    return this.waitUntil(
      () => this.events.slice(options.from ?? 0).find((e) => e.type === type && (options.where?.(e) ?? true)),
      type,
      options.timeoutMs,
    );
  }

  /** The binary message with this index, once it has arrived. */
  async waitForBinary(index: number, timeoutMs?: number): Promise<{ data: Buffer; receivedAtMs: number }> {
    return this.waitUntil(() => this.binary[index], `binary message ${index}`, timeoutMs);
  }

  private async waitUntil<T>(find: () => T | undefined, what: string, timeoutMs = 30_000): Promise<T> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const found = find();
      if (found !== undefined) return found;
      if (this.closeCode !== undefined) throw new Error(`socket closed (${this.closeCode} ${this.closeReason}) before ${what}`);
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`no ${what} within ${timeoutMs} ms; got ${this.events.map((e) => e.type).join(', ')}`);
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.waiters.add(wake);
      });
    }
  }

  /**
   * Streams 16-bit PCM in pieces of `pieceMs` at real-time pace (or as fast as possible), as append events or binary
   * messages. Returns when each piece was sent (performance.now()), by piece index.
   */
  async streamPcm16(
    pcm: Buffer,
    options: { sampleRate: number; pieceMs?: number; realTime?: boolean; binary?: boolean },
  ): Promise<number[]> {
    const pieceBytes = Math.round((options.sampleRate * (options.pieceMs ?? 100)) / 1000) * 2;
    const startedAt = performance.now();
    const sentAt: number[] = [];
    for (let offset = 0; offset < pcm.length; offset += pieceBytes) {
      if (options.realTime ?? true) {
        const due = startedAt + (offset / 2 / options.sampleRate) * 1000;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
      }
      const piece = pcm.subarray(offset, offset + pieceBytes);
      if (this.socket.readyState !== WebSocket.OPEN) break;
      if (options.binary) this.socket.send(piece, { binary: true });
      else this.send({ type: 'input_audio_buffer.append', audio: piece.toString('base64') });
      sentAt.push(performance.now());
    }
    return sentAt;
  }

  close(): Promise<void> {
    this.socket.close();
    return this.closed;
  }
}

/** Float samples as 16-bit little-endian PCM. */
export function toPcm16(samples: Float32Array): Buffer {
  const out = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(samples[i]! * 32767))), i * 2);
  return out;
}

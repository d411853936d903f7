/** What every adapter (HTTP route, job worker, CLI) hands an operation, and the output it renders. */
import type { BaseLogger } from 'pino';
import type { ApiKeyRecord } from './records.js';

/** An input file on local disk (an upload being handled, a job's input fetched from the blob store, a CLI argument). */
export interface InputFile {
  field: string;
  path: string;
  filename: string;
  mimetype: string;
  bytes: number;
}

export interface Progress {
  /** What runs now, e.g. `transcribing`, `separating`, `synthesizing`. */
  stage: string;
  /** 0..1 of the whole operation. */
  fraction: number;
}

export interface OperationContext {
  /** The request's or job's id: in logs, and the base of result ids. */
  requestId: string;
  /** Who asks: owner of what the operation creates, and whose voices it may use. */
  apiKey: ApiKeyRecord;
  /** Aborted when the caller goes away or cancels. */
  signal: AbortSignal;
  inputs: Map<string, InputFile[]>;
  log: Pick<BaseLogger, 'debug' | 'info' | 'warn' | 'error'>;
  /** How long result files stay downloadable (default: VOXD_FILE_TTL_SECONDS); a job's results live as long as the job. */
  resultTtlSeconds?: number;
  /** Called as the work advances (chunks, sentences); cheap to call often. */
  onProgress?: (progress: Progress) => void;
}

/** Result of an operation: a JSON body, audio bytes, text, or a stream of bytes. */
export type OperationResult =
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'audio'; bytes: Buffer; contentType: string; headers?: Record<string, string> }
  | { kind: 'text'; body: string; contentType: string }
  | { kind: 'stream'; stream: NodeJS.ReadableStream; contentType: string; headers?: Record<string, string> };

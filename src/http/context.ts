/** What a route hands to a service: who asks, the uploads, cancellation. */
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyRecord, Scope } from '../storage/store.js';

export interface UploadedFile {
  field: string;
  /** Temp file under the data dir, removed when the response ends. */
  path: string;
  filename: string;
  mimetype: string;
  bytes: number;
}

export interface RequestContext {
  requestId: string;
  apiKey: ApiKeyRecord;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  uploads: Map<string, UploadedFile[]>;
  log: FastifyBaseLogger;
}

/** Result of an operation, written by `sendResult`. */
export type OperationResult =
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'audio'; bytes: Buffer; contentType: string; headers?: Record<string, string> }
  | { kind: 'text'; body: string; contentType: string }
  | { kind: 'stream'; stream: NodeJS.ReadableStream; contentType: string; headers?: Record<string, string> };

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: ApiKeyRecord | undefined;
    uploads: Map<string, UploadedFile[]>;
    abortController: AbortController;
  }
  interface FastifyContextConfig {
    /** Scope a key needs; routes without one are public. */
    scope?: Scope | 'any';
  }
}

export function requestContext(request: FastifyRequest): RequestContext {
  if (!request.apiKey) throw new Error('requestContext on an unauthenticated route');
  return { requestId: request.id, apiKey: request.apiKey, signal: request.abortController.signal, uploads: request.uploads, log: request.log };
}

export function sendResult(reply: FastifyReply, result: OperationResult): FastifyReply {
  switch (result.kind) {
    case 'json':
      return reply.status(result.status ?? 200).headers(result.headers ?? {}).send(result.body);
    case 'audio':
      return reply.headers(result.headers ?? {}).type(result.contentType).send(result.bytes);
    case 'text':
      return reply.type(result.contentType).send(result.body);
    case 'stream':
      return reply.headers(result.headers ?? {}).type(result.contentType).send(result.stream);
  }
}

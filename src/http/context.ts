/** What a route hands to an operation: who asks, the uploads, cancellation; and how an operation's result is sent. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { InputFile, OperationContext, OperationResult } from '../core/operation-context.js';
import type { ApiKeyRecord, Scope } from '../core/records.js';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: ApiKeyRecord | undefined;
    /** Multipart files, streamed to scratch files removed when the response ends. */
    uploads: Map<string, InputFile[]>;
    abortController: AbortController;
  }
  interface FastifyContextConfig {
    /** Scope a key needs; routes without one are public. */
    scope?: Scope | 'any';
  }
}

export function requestContext(request: FastifyRequest): OperationContext {
  if (!request.apiKey) throw new Error('requestContext on an unauthenticated route');
  return {
    requestId: request.id,
    apiKey: request.apiKey,
    signal: request.abortController.signal,
    inputs: request.uploads,
    log: request.log,
  };
}

export function sendResult(reply: FastifyReply, result: OperationResult): FastifyReply {
  switch (result.kind) {
    case 'json':
      return reply
        .status(result.status ?? 200)
        .headers(result.headers ?? {})
        .send(result.body);
    case 'audio':
      return reply
        .headers(result.headers ?? {})
        .type(result.contentType)
        .send(result.bytes);
    case 'text':
      return reply.type(result.contentType).send(result.body);
    case 'stream':
      return reply
        .headers(result.headers ?? {})
        .type(result.contentType)
        .send(result.stream);
  }
}

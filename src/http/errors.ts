/** Maps every error to the one envelope: {"error": {"type", "code", "message", "param", "request_id"}}. */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import { VoxError, type ErrorCode } from '../core/errors.js';

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  /** Present because ajv runs with verbose: true. */
  data?: unknown;
}

const statusCodes: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unsupported_value',
  429: 'rate_limited',
  503: 'overloaded',
};

function fromValidation(errors: AjvError[], context: string | undefined): VoxError {
  const first = errors[0]!;
  const missing = first.params.missingProperty as string | undefined;
  const param = missing ?? (first.instancePath.replace(/^\//, '').replaceAll('/', '.') || context || null);
  if (first.keyword === 'enum') {
    const accepted = (first.params.allowedValues as unknown[]).map(String);
    const value = first.data === undefined ? '' : ` '${String(first.data)}'`;
    return new VoxError('unsupported_value', `Unsupported ${param}${value}. Supported: ${accepted.join(', ')}.`, param ? { param } : {});
  }
  const where = param ? `'${param}' ` : '';
  const message = missing ? `'${missing}' is required.` : `${where}${first.message ?? 'is invalid'}.`;
  return new VoxError('invalid_request', message, param ? { param } : {});
}

/** Turns anything thrown during a request into a VoxError. */
export function toVoxError(error: unknown): VoxError {
  if (error instanceof VoxError) return error;
  const fastifyError = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fastifyError.validation) return fromValidation(fastifyError.validation, fastifyError.validationContext);
  switch (fastifyError.code) {
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new VoxError('payload_too_large', 'The upload is larger than the configured limit (VOXD_MAX_UPLOAD_MB).', { param: 'audio' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new VoxError(
        'unsupported_media_type',
        'Unsupported Content-Type for this route: send application/json or multipart/form-data as documented.',
        { cause: error },
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new VoxError('invalid_request', 'A path parameter is longer than 100 characters.', { cause: error });
    case 'FST_ERR_BAD_URL':
      return new VoxError('invalid_request', 'The URL is not valid (malformed percent-encoding).', { cause: error });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new VoxError('invalid_request', 'The request body is not valid JSON.', { cause: error });
    default:
      break;
  }
  const status = fastifyError.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const code = statusCodes[status] ?? 'invalid_request';
    return new VoxError(code, fastifyError.message || 'Invalid request.', { cause: error });
  }
  return new VoxError('internal', 'Internal server error.', { cause: error });
}

export function envelope(voxError: VoxError, requestId: string): { error: Record<string, string | null> } {
  const message = voxError.code === 'internal' ? 'Internal server error.' : voxError.message;
  return { error: { type: voxError.type, code: voxError.code, message, param: voxError.param, request_id: requestId } };
}

export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // Aborted work fails in many ways (an engine's 'aborted', a killed encoder): why it was aborted is the answer.
  const signal = (request.abortController as AbortController | null)?.signal;
  const voxError = signal?.aborted && signal.reason instanceof VoxError ? signal.reason : toVoxError(error);
  if (voxError.status >= 500) request.log.error({ err: error, code: voxError.code }, voxError.message);
  else request.log.info({ code: voxError.code, param: voxError.param }, voxError.message);
  if (voxError.retryAfterSeconds !== undefined) reply.header('retry-after', String(voxError.retryAfterSeconds));
  return reply.status(voxError.status).send(envelope(voxError, request.id));
}

/**
 * The raw HTTP response for a request Node's parser refused (a control character in a header, headers too large, too
 * slow): no Fastify request exists then, so the envelope is written to the socket as it is.
 */
export function clientErrorResponse(error: { code?: string }, requestId: string): string {
  const voxError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new VoxError('headers_too_large', 'The request headers are larger than the server accepts.')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new VoxError('request_timeout', 'The request did not arrive in time.')
        : new VoxError(
            'invalid_request',
            'The request is not valid HTTP (e.g. a control character in a header or a malformed request line).',
          );
  const body = JSON.stringify(envelope(voxError, requestId));
  return [
    `HTTP/1.1 ${voxError.status} ${STATUS_CODES[voxError.status]}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    'connection: close',
    '',
    body,
  ].join('\r\n');
}

/** The one error type of voxd. The HTTP layer turns it into the error envelope; `cause` is logged, never sent. */

export const errorCatalogue = {
  invalid_request: { status: 400, type: 'invalid_request_error' },
  unauthorized: { status: 401, type: 'authentication_error' },
  forbidden: { status: 403, type: 'permission_error' },
  not_found: { status: 404, type: 'not_found_error' },
  method_not_allowed: { status: 405, type: 'invalid_request_error' },
  request_timeout: { status: 408, type: 'invalid_request_error' },
  payload_too_large: { status: 413, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  unsupported_value: { status: 422, type: 'invalid_request_error' },
  upgrade_required: { status: 426, type: 'invalid_request_error' },
  rate_limited: { status: 429, type: 'rate_limit_error' },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
  internal: { status: 500, type: 'server_error' },
  not_implemented: { status: 501, type: 'server_error' },
  overloaded: { status: 503, type: 'overloaded_error' },
  model_unavailable: { status: 503, type: 'server_error' },
  aborted: { status: 499, type: 'invalid_request_error' },
} as const;

export type ErrorCode = keyof typeof errorCatalogue;

export interface VoxErrorOptions {
  param?: string;
  cause?: unknown;
  /** Seconds the client should wait before retrying (429 and 503). */
  retryAfterSeconds?: number;
}

export class VoxError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, options: VoxErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'VoxError';
    this.code = code;
    this.status = errorCatalogue[code].status;
    this.type = errorCatalogue[code].type;
    this.param = options.param ?? null;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** 422 for a value outside a closed set; the message lists what is accepted. */
export function unsupportedValue(param: string, value: string, accepted: readonly string[]): VoxError {
  const list =
    accepted.length > 40
      ? `${accepted.slice(0, 40).join(', ')}, ... (${accepted.length} in all, see GET /v1/capabilities)`
      : accepted.join(', ');
  return new VoxError('unsupported_value', `Unsupported ${param} '${value}'. Supported: ${list}.`, { param });
}

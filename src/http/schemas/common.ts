/** Schemas every route shares: the error envelope, the error responses. */
import { Type } from '@sinclair/typebox';

export const errorEnvelope = Type.Object(
  {
    error: Type.Object({
      type: Type.String(),
      code: Type.String(),
      message: Type.String(),
      param: Type.Union([Type.String(), Type.Null()]),
      request_id: Type.String(),
    }),
  },
  { $id: 'ErrorEnvelope' },
);

const errorDescriptions: Record<number, string> = {
  400: 'Invalid request: a missing or invalid field (named in `param`), a malformed body, several Authorization headers',
  401: 'Missing, unknown or revoked API key',
  403: "The key lacks the route's scope",
  404: 'No such voice or file',
  413: 'Upload over VOXD_MAX_UPLOAD_MB, audio over VOXD_MAX_AUDIO_SECONDS, or a JSON body over 1 MB',
  415: 'Not decodable as audio, or a Content-Type the route does not take',
  422: 'A value outside a closed set: the message lists the valid ones',
  429: 'Per-key rate or concurrency limit reached (Retry-After)',
  500: 'A bug: logged with its cause, never leaked',
  501: "The operation's engine is not available on this server",
  503: 'Queue full (Retry-After) or a model not installed',
};

/** Error statuses every route with a key can answer (a bad key, too many requests, a bug). */
export const keyedErrors = [400, 401, 429, 500] as const;

/** The response schemas of the given error statuses, all the one envelope. */
export function errorResponses(statuses: readonly number[]): Record<number, unknown> {
  return Object.fromEntries(statuses.map((status) => [status, { description: errorDescriptions[status], $ref: 'ErrorEnvelope#' }]));
}

/** The `content` of a binary response in any of these types (audio, archives). */
export function binaryContent(contentTypes: readonly string[]): Record<string, { schema: unknown }> {
  return Object.fromEntries(contentTypes.map((type) => [type, { schema: { type: 'string', format: 'binary' } }]));
}

/** A JSON object whose listed fields are documented; others may follow. */
export const openObject = (properties: Parameters<typeof Type.Object>[0], description: string) =>
  Type.Object(properties, { additionalProperties: true, description });

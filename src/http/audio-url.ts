/**
 * `audio_url` on every route that takes an upload: the server downloads the file and the route sees it exactly as if it
 * had been uploaded under its file field (same admission: duration limit, "not audio"). One implementation for all routes.
 * The address is the caller's choice, so it gets the webhooks' guard: public addresses only unless configured, checked
 * before the request and again on every connection, every redirect hop included.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { request as httpRequest, type Agent } from 'undici';
import { VoxError } from '../core/errors.js';
import { checkCallerUrl, guardedAgent, type WebhookAddressPolicy } from '../jobs/webhook-address.js';
import type { Scratch } from '../storage/store.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The file field an `audio_url` in the body stands for (routes that take an upload). */
    audioUrlField?: string;
  }
}

export interface AudioUrlOptions {
  scratch: Scratch;
  policy: WebhookAddressPolicy;
  maxBytes: number;
  timeoutMilliseconds: number;
}

/** Redirects followed before giving up (each hop is checked like the first address). */
export const maxAudioUrlRedirects = 5;
const param = 'audio_url';
const allowSetting = 'VOXD_AUDIO_URL_ALLOW_PRIVATE';
/** Types a server sends for a page or an API answer, never for a media file: refused before downloading. */
const notAudioType = /^(text\/|application\/(json|xml|xhtml\+xml|problem\+json)\b)|html/i;

const failed = (message: string, cause?: unknown): VoxError => new VoxError('invalid_request', message, { param, cause });

export interface FetchedAudio {
  filename: string;
  mimetype: string;
  bytes: number;
}

/** Why a connection failed, in the caller's words. */
function unreachable(url: URL, error: unknown): VoxError {
  if (error instanceof VoxError) return error;
  const code = (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
  const name = (error as { name?: string }).name;
  if (code === 'EADDRNOTAVAIL')
    return failed(
      `audio_url host '${url.hostname}' resolves to an address that is not public (${allowSetting}=true allows private ones).`,
      error,
    );
  if (name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
    return failed(`audio_url '${url.href}' did not answer in time.`, error);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return failed(`audio_url host '${url.hostname}' does not resolve.`, error);
  return failed(`audio_url '${url.href}' is unreachable (${code ?? (error as Error).message}).`, error);
}

/** Downloads `text` to `destination`, at most `maxBytes` (stopped as soon as more arrive). */
export async function fetchAudioUrl(
  text: string,
  destination: string,
  options: { policy: WebhookAddressPolicy; agent: Agent; maxBytes: number; timeoutMilliseconds: number; signal?: AbortSignal },
): Promise<FetchedAudio> {
  const signal = AbortSignal.any([AbortSignal.timeout(options.timeoutMilliseconds), ...(options.signal ? [options.signal] : [])]);
  let url = await checkCallerUrl(text, options.policy, param, allowSetting);
  for (let hop = 0; ; hop++) {
    let response: Awaited<ReturnType<typeof httpRequest>>;
    try {
      response = await httpRequest(url, { method: 'GET', dispatcher: options.agent, signal, headers: { accept: 'audio/*, video/*, */*' } });
    } catch (error) {
      throw unreachable(url, error);
    }
    const { statusCode, headers, body } = response;
    const location = headers.location;
    if (statusCode >= 300 && statusCode < 400 && typeof location === 'string') {
      body.resume();
      if (hop >= maxAudioUrlRedirects) throw failed(`audio_url redirected more than ${maxAudioUrlRedirects} times.`);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw failed(`audio_url '${url.href}' redirected to an invalid address.`);
      }
      url = await checkCallerUrl(next.href, options.policy, param, allowSetting);
      continue;
    }
    if (statusCode < 200 || statusCode >= 300) {
      body.resume();
      throw failed(`audio_url '${url.href}' answered HTTP ${statusCode}.`);
    }
    const mimetype = String(headers['content-type'] ?? 'application/octet-stream');
    if (notAudioType.test(mimetype)) {
      body.resume();
      throw new VoxError('unsupported_media_type', `audio_url '${url.href}' is not audio (it is ${mimetype.split(';')[0]}).`, { param });
    }
    const tooLarge = (): VoxError =>
      new VoxError('payload_too_large', `audio_url '${url.href}' is larger than the configured limit (VOXD_MAX_UPLOAD_MB).`, { param });
    if (Number(headers['content-length'] ?? 0) > options.maxBytes) {
      body.destroy();
      throw tooLarge();
    }
    let bytes = 0;
    // The declared length may be absent or false: the count is what stops the download.
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        bytes += chunk.length;
        callback(bytes > options.maxBytes ? tooLarge() : null, chunk);
      },
    });
    try {
      await pipeline(body, counter, createWriteStream(destination));
    } catch (error) {
      throw error instanceof VoxError ? error : unreachable(url, error);
    }
    const filename = decodeURIComponent(path.posix.basename(url.pathname)) || param;
    return { filename, mimetype, bytes };
  }
}

/** The hook: fills the route's file field from `audio_url` before validation, so the route cannot tell the difference. */
export function registerAudioUrls(app: FastifyInstance, options: AudioUrlOptions): void {
  const agent = guardedAgent(options.policy);
  app.addHook('onClose', async () => (await agent).close());
  app.addHook('preValidation', async (request: FastifyRequest, reply) => {
    const field = request.routeOptions.config.audioUrlField;
    const body = request.body as Record<string, unknown> | undefined;
    if (!field || body === null || typeof body !== 'object' || body[param] === undefined) return;
    const text = body[param];
    if (typeof text !== 'string') throw failed('audio_url must be one URL (a string).');
    if ((request.uploads.get(field) ?? []).length > 0 || body[field] !== undefined)
      throw failed(`Send either a '${field}' file or audio_url, not both.`);
    const destination = options.scratch.path();
    // Removed with the response, however it ends (like uploads).
    reply.raw.once('close', () => void rm(destination, { force: true }));
    const fetched = await fetchAudioUrl(text, destination, {
      policy: options.policy,
      agent: await agent,
      maxBytes: options.maxBytes,
      timeoutMilliseconds: options.timeoutMilliseconds,
      signal: request.abortController.signal,
    });
    request.uploads.set(field, [{ field, path: destination, ...fetched }]);
    const { [param]: _url, ...rest } = body;
    request.body = { ...rest, [field]: 'upload:0' };
  });
}

/** Bearer-key authentication, scopes, per-key rate and concurrency limits. */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { ApiKeyService } from '../auth/api-keys.js';
import { clientSecretPrefix, type ClientSecretService } from '../auth/client-secrets.js';
import { VoxError } from '../core/errors.js';

export interface AuthOptions {
  apiKeys: ApiKeyService;
  clientSecrets: ClientSecretService;
  rateLimitPerMinute: number;
  maxConcurrentPerKey: number;
}

export async function registerAuth(app: FastifyInstance, options: AuthOptions): Promise<void> {
  app.decorateRequest('apiKey', undefined);
  const inFlight = new Map<string, number>();

  app.addHook('onRequest', async (request) => {
    const scope = request.routeOptions.config.scope;
    if (!scope) return;
    // Node keeps only the first of repeated Authorization headers; which one counts must not be left to chance.
    const authorizations = request.raw.rawHeaders.filter((value, i) => i % 2 === 0 && value.toLowerCase() === 'authorization');
    if (authorizations.length > 1)
      throw new VoxError('invalid_request', 'Send one Authorization header, not several.', { param: 'authorization' });
    const presented =
      /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1] ??
      (request.ws ? subprotocolKey(request.headers['sec-websocket-protocol']) : undefined);
    if (!presented) throw new VoxError('unauthorized', 'Missing API key: send Authorization: Bearer <key>.');
    const isClientSecret = presented.startsWith(clientSecretPrefix);
    if (isClientSecret && !request.ws)
      throw new VoxError('unauthorized', 'Client secrets (ek_...) open realtime sessions only; other requests need an API key.');
    const record = isClientSecret ? await options.clientSecrets.verify(presented) : await options.apiKeys.verify(presented);
    if (!record) throw new VoxError('unauthorized', isClientSecret ? 'Invalid or expired client secret.' : 'Invalid or revoked API key.');
    if (scope !== 'any' && !record.scopes.includes(scope) && !record.scopes.includes('admin')) {
      throw new VoxError('forbidden', `This API key lacks the '${scope}' scope.`);
    }
    request.apiKey = record;
  });

  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    max: options.rateLimitPerMinute,
    timeWindow: 60_000,
    enableDraftSpec: true,
    keyGenerator: (request) => request.apiKey?.id ?? request.ip,
    allowList: (request) => request.apiKey === undefined,
    errorResponseBuilder: (_request, context) =>
      new VoxError('rate_limited', `Rate limit of ${context.max} requests per minute reached for this key; retry in ${context.after}.`, {
        retryAfterSeconds: Math.max(1, Math.ceil(context.ttl / 1000)),
      }),
  });

  // After the rate limiter, so a rejected request never holds a concurrency slot. Realtime sessions have their own limit.
  app.addHook('onRequest', async (request, reply) => {
    const key = request.apiKey;
    if (!key || request.ws) return;
    const current = inFlight.get(key.id) ?? 0;
    if (current >= options.maxConcurrentPerKey) {
      throw new VoxError('rate_limited', `This key already has ${current} requests in flight (limit ${options.maxConcurrentPerKey}).`, {
        retryAfterSeconds: 1,
      });
    }
    inFlight.set(key.id, current + 1);
    // The response closing is the one end every request has: sent, failed, or the client gone (then onResponse never runs).
    reply.raw.once('close', () => {
      const left = (inFlight.get(key.id) ?? 1) - 1;
      if (left <= 0) inFlight.delete(key.id);
      else inFlight.set(key.id, left);
    });
  });
}

/** Browsers cannot set headers on a WebSocket: they send the key as a subprotocol, as OpenAI's realtime clients do. */
export const keySubprotocolPrefix = 'openai-insecure-api-key.';

function subprotocolKey(header: string | undefined): string | undefined {
  return header
    ?.split(',')
    .map((p) => p.trim())
    .find((p) => p.startsWith(keySubprotocolPrefix))
    ?.slice(keySubprotocolPrefix.length);
}

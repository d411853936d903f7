/** The HTTP app as a plugin-composed Fastify instance. main.ts listens; tests use inject() or listen on port 0. */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import websocket from '@fastify/websocket';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { Container } from '../container.js';
import { VoxError } from '../core/errors.js';
import { registerAuth } from './auth.js';
import { clientErrorResponse, sendError } from './errors.js';
import { fileRoutes } from './routes/files.js';
import { jobRoutes } from './routes/jobs.js';
import { openaiRoutes, operationRoutes } from './routes/operations.js';
import { realtimeRoutes } from './routes/realtime.js';
import { systemRoutes } from './routes/system.js';
import { pronunciationDictionaryRoutes } from './routes/pronunciation-dictionaries.js';
import { voiceRoutes } from './routes/voices.js';
import { builtWebDir, webRoutes } from './routes/web.js';
import { maxIdLength } from '../core/contract-fields.js';
import { errorEnvelope } from './schemas/common.js';
import { registerUploads } from './uploads.js';
import { registerAudioUrls } from './audio-url.js';

export interface BuildAppOptions {
  logger: FastifyBaseLogger | boolean;
  /** Aborted when the shutdown grace period is over: every request still in flight is stopped with its reason. */
  shutdown?: AbortSignal;
}

/** The answer to requests that arrive, or are cut, while the server shuts down. */
export const shuttingDown = (): VoxError => new VoxError('overloaded', 'The server is shutting down.', { retryAfterSeconds: 5 });
const newRequestId = (): string => `req_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
const httpMethods = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'];

/** Fastify's serializer factory, except that error statuses get JSON.stringify instead of a compiled serializer each. */
const errorsAsPlainJson: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  return (route) => (Number(route.httpStatus) >= 400 ? (data: unknown) => JSON.stringify(data) : compile(route));
};

export async function buildApp(container: Container, options: BuildAppOptions): Promise<FastifyInstance> {
  const { config, metrics } = container;
  const app = Fastify({
    // Error bodies leave sendError in the envelope's exact shape, so they are sent as plain JSON: compiling a serializer
    // for every error status of every route held most of an API-only node's memory (its RSS 170 -> 134 MB at start).
    schemaController: { compilersFactory: { buildSerializer: errorsAsPlainJson } },
    ...(typeof options.logger === 'boolean' ? { logger: options.logger } : { loggerInstance: options.logger }),
    genReqId: newRequestId,
    bodyLimit: 1024 * 1024,
    // Requests arriving while closing get the error envelope from the preParsing hook below, not Fastify's own 503 body.
    return503OnClosing: false,
    routerOptions: { maxParamLength: maxIdLength },
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: false, verbose: true, formats: { binary: true } } },
    // Errors raised before a route runs (over-long path parameter, bad percent-encoding) get the envelope too.
    frameworkErrors: (error, request, reply) => sendError(error, request, reply.header('x-request-id', request.id)),
    clientErrorHandler: (error, socket) => {
      // As Fastify's default: a reset connection has nobody to answer.
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      if (socket.writable) socket.write(clientErrorResponse(error, newRequestId()));
      socket.destroy(error);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Only JSON and multipart bodies are meaningful here; anything else is 415, not a validation error.
  app.removeContentTypeParser('text/plain');
  app.addSchema(errorEnvelope);
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply));
  app.setNotFoundHandler((request, reply) =>
    sendError(new VoxError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`), request, reply),
  );

  let closing = false;
  // Ends open event streams when the server closes (their clients reconnect elsewhere or follow the job later).
  const closeStreams = new AbortController();
  app.addHook('preClose', async () => {
    closing = true;
    closeStreams.abort();
  });
  // Methods of each documented path (the API; not /docs or the 405 routes below, which are hidden).
  const methodsByUrl = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    if (route.schema?.hide === true) return;
    const methods = methodsByUrl.get(route.url) ?? new Set<string>();
    for (const method of [route.method].flat()) methods.add(method);
    methodsByUrl.set(route.url, methods);
  });

  app.decorateRequest('abortController', null as unknown as AbortController);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    const controller = new AbortController();
    request.abortController = controller;
    const { shutdown } = options;
    const onShutdown = (): void => {
      request.log.warn({ method: request.method, url: request.url }, 'shutdown grace period over: aborting the request');
      controller.abort(shutdown?.reason);
    };
    shutdown?.addEventListener('abort', onShutdown, { once: true });
    // The response stream closing before it finished means the client went away: stop the work.
    reply.raw.on('close', () => {
      shutdown?.removeEventListener('abort', onShutdown);
      if (!reply.raw.writableFinished) controller.abort(new VoxError('aborted', 'The client disconnected.'));
    });
  });
  // After the other onRequest hooks (so the request is fully set up) and before a body is read.
  app.addHook('preParsing', async () => {
    if (closing) throw shuttingDown();
  });
  app.addHook('onSend', async (_request, reply) => {
    // Answers sent while draining end their connection, so the client does not send the next request to a closing server.
    if (closing) reply.header('connection', 'close');
  });
  app.addHook('onResponse', async (request, reply) => {
    // A keep-alive connection whose response started before closing (e.g. a stream) is idle now: close() waits for it.
    if (closing) app.server.closeIdleConnections();
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.httpSeconds.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  await app.register(swagger, {
    // Shared schemas keep their $id as component name (ErrorEnvelope), not def-0.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'voxd',
        version: container.version,
        description: 'Self-hosted speech API: TTS, voice conversion, separation, transcription.',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key (vx_...)' } } },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  await app.register(websocket, {
    options: {
      // Messages over the configured size get an error event and are dropped; twice that size closes the socket (1009).
      maxPayload: config.realtimeMaxMessageBytes * 2,
      // A browser sends its key as a subprotocol next to 'realtime' and fails the connection unless one is chosen.
      handleProtocols: (protocols) => (protocols.has('realtime') ? 'realtime' : ([...protocols][0] ?? false)),
    },
  });
  await registerAuth(app, {
    apiKeys: container.apiKeys,
    clientSecrets: container.clientSecrets,
    rateLimitPerMinute: config.rateLimitPerMinute,
    maxConcurrentPerKey: config.maxConcurrentPerKey,
  });
  await registerUploads(app, { scratch: container.scratch, maxUploadBytes: config.maxUploadBytes });
  registerAudioUrls(app, {
    scratch: container.scratch,
    policy: { allowPrivate: config.audioUrlAllowPrivate },
    maxBytes: config.maxUploadBytes,
    timeoutMilliseconds: config.audioUrlTimeoutSeconds * 1000,
  });

  await app.register(systemRoutes, {
    version: container.version,
    metrics,
    metricsPublic: config.metricsPublic,
    readiness: () => container.readiness(),
    capabilities: () => container.capabilities(),
  });
  const operations = { runners: container.runners, jobs: container.jobs, runLocally: config.role !== 'api' };
  await app.register(operationRoutes, operations);
  await app.register(openaiRoutes, operations);
  await app.register(jobRoutes, { jobs: container.jobs, apiKeys: container.apiKeys, closing: closeStreams.signal });
  await app.register(fileRoutes, { files: container.files });
  await app.register(realtimeRoutes, {
    available: config.role !== 'api',
    liveTranscription: container.operations.liveTranscription,
    synthesis: container.operations.synthesis,
    clientSecrets: container.clientSecrets,
    metrics,
    limits: {
      sessionsPerKey: config.realtimeSessionsPerKey,
      idleSeconds: config.realtimeIdleSeconds,
      maxSessionSeconds: config.realtimeMaxSessionSeconds,
      maxMessageBytes: config.realtimeMaxMessageBytes,
    },
  });
  await app.register(voiceRoutes, { voices: container.voices, synthesis: container.operations.synthesis });
  await app.register(pronunciationDictionaryRoutes, { dictionaries: container.dictionaries });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(webRoutes, { root: builtWebDir });

  // A known path asked with another method is a 405 naming the allowed ones, not the 404 of an unknown path.
  for (const [url, methods] of methodsByUrl) {
    const allow = [...methods].join(', ');
    app.route({
      method: httpMethods.filter((method) => !methods.has(method)),
      url,
      schema: { hide: true },
      handler: (request, reply) =>
        sendError(
          new VoxError('method_not_allowed', `${request.method} is not allowed on ${url}; allowed: ${allow}.`),
          request,
          reply.header('allow', allow),
        ),
    });
  }
  return app;
}

/** Realtime sockets (live transcription) and the client secrets that open them from browsers. */
import type { FastifyPluginAsync } from 'fastify';
import type { ClientSecretService } from '../../auth/client-secrets.js';
import { unsupportedValue, VoxError } from '../../core/errors.js';
import type { Metrics } from '../../core/metrics.js';
import type { LiveTranscriptionService } from '../../operations/live-transcription/service.js';
import type { SynthesisService } from '../../operations/synthesize/service.js';
import { requestContext } from '../context.js';
import { clientSecret, clientSecretRequest, realtimeQuery, type ClientSecretRequest, type RealtimeQuery } from '../schemas/realtime.js';
import { errorResponses, keyedErrors } from '../schemas/common.js';
import { SessionCounter, type ConnectionLimits } from '../realtime/connection.js';
import { serveSpeechSocket } from '../realtime/speech.js';
import { serveTranscriptionSocket } from '../realtime/transcription.js';

export interface RealtimeRoutesOptions {
  /** Whether this node runs engines (an API-only node refuses realtime sockets at the upgrade). */
  available: boolean;
  liveTranscription: LiveTranscriptionService;
  synthesis: SynthesisService;
  clientSecrets: ClientSecretService;
  limits: ConnectionLimits;
  metrics: Metrics;
}

const security = [{ bearerAuth: [] }];
const tags = ['realtime'];
const defaultSecretSeconds = 600;
const switchingProtocols = { description: 'Switching Protocols: the WebSocket session begins (messages: see the README).' };
const upgradeRequired = (): VoxError =>
  new VoxError('upgrade_required', 'This is a WebSocket endpoint: connect with a WebSocket client (Upgrade: websocket).');

export const realtimeRoutes: FastifyPluginAsync<RealtimeRoutesOptions> = async (app, options) => {
  const counter = new SessionCounter();
  const socketOptions = { limits: options.limits, counter, metrics: options.metrics };
  const refuseWithoutEngines = (): void => {
    if (!options.available)
      throw new VoxError('not_implemented', 'Realtime sessions run on nodes with engines (--role all); this node serves the API only.');
  };

  app.route<{ Querystring: RealtimeQuery }>({
    method: 'GET',
    url: '/v1/realtime',
    config: { scope: 'transcribe' },
    schema: {
      summary: 'Live transcription over a WebSocket (OpenAI transcription-session protocol; see the README)',
      tags,
      security,
      querystring: realtimeQuery,
      response: { 101: switchingProtocols, ...errorResponses([...keyedErrors, 403, 422, 426, 501]) },
    },
    preValidation: async (request) => {
      if (request.query.intent !== 'transcription') throw unsupportedValue('intent', request.query.intent ?? '', ['transcription']);
      refuseWithoutEngines();
    },
    handler: async () => {
      throw upgradeRequired();
    },
    wsHandler: (socket, request) =>
      serveTranscriptionSocket(socket, requestContext(request).apiKey.id, request.log, {
        ...socketOptions,
        service: options.liveTranscription,
      }),
  });

  app.route({
    method: 'GET',
    url: '/v1/audio/tts/stream',
    config: { scope: 'tts' },
    schema: {
      summary: 'Streaming speech over a WebSocket: text in pieces, audio frames out (see the README)',
      description:
        'Client messages: start, text, flush, cancel, close. A <speak> document is SSML, spoken whole once its </speak> has ' +
        'come (it may span text messages); malformed SSML, and SSML markup outside a document, get an error event naming ' +
        'the element and where it is, are not spoken, and the session goes on.',
      tags,
      security,
      response: { 101: switchingProtocols, ...errorResponses([...keyedErrors, 403, 426, 501]) },
    },
    preValidation: async () => refuseWithoutEngines(),
    handler: async () => {
      throw upgradeRequired();
    },
    wsHandler: (socket, request) =>
      serveSpeechSocket(socket, requestContext(request).apiKey, request.log, { ...socketOptions, synthesis: options.synthesis }),
  });

  app.post<{ Body: ClientSecretRequest }>(
    '/v1/realtime/client_secrets',
    {
      config: { scope: 'any' },
      schema: {
        summary: "A short-lived client secret (ek_...) that opens realtime sessions in this key's name, for browsers and apps",
        tags,
        security,
        body: clientSecretRequest,
        response: { 200: clientSecret, ...errorResponses([...keyedErrors, 403]) },
      },
    },
    async (request) => {
      const secret = options.clientSecrets.mint(
        requestContext(request).apiKey,
        request.body?.expires_after?.seconds ?? defaultSecretSeconds,
      );
      return { value: secret.value, expires_at: secret.expiresAt, scopes: secret.scopes };
    },
  );
};

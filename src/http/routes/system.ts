/** Health, readiness, capabilities, metrics. */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Metrics } from '../../core/metrics.js';
import type { Readiness } from '../../models/loaded.js';
import { errorResponses, keyedErrors, openObject } from '../schemas/common.js';

export interface SystemRoutesOptions {
  version: string;
  metrics: Metrics;
  /** Serve /metrics without a key; otherwise it needs scope `metrics` (or admin). */
  metricsPublic: boolean;
  readiness: () => Readiness;
  capabilities: () => Promise<unknown>;
}

const tags = ['system'];
const readiness = Type.Object({
  ready: Type.Boolean(),
  models: Type.Array(
    Type.Object({ id: Type.String(), operations: Type.Array(Type.String()), loaded: Type.Boolean(), error: Type.Optional(Type.String()) }),
  ),
});

export const systemRoutes: FastifyPluginAsync<SystemRoutesOptions> = async (app, options) => {
  const startedAt = Date.now();
  app.get(
    '/v1/health',
    {
      schema: {
        summary: 'Liveness',
        tags,
        response: {
          200: Type.Object({ status: Type.Literal('ok'), version: Type.String(), uptime_seconds: Type.Integer() }),
          ...errorResponses([500]),
        },
      },
    },
    async () => ({
      status: 'ok',
      version: options.version,
      uptime_seconds: Math.round((Date.now() - startedAt) / 1000),
    }),
  );

  app.get(
    '/v1/ready',
    {
      schema: {
        summary: 'Readiness: 503 until the models of enabled operations are loaded',
        tags,
        response: { 200: readiness, 503: { ...readiness, description: 'Some models are not loaded (yet)' }, ...errorResponses([500]) },
      },
    },
    async (_request, reply) => {
      const readiness = options.readiness();
      return reply.status(readiness.ready ? 200 : 503).send(readiness);
    },
  );

  app.get(
    '/v1/capabilities',
    {
      schema: {
        summary: 'Languages, emotions, formats, stems, limits, engines and models',
        tags,
        response: {
          200: openObject(
            {
              tts: openObject({}, 'Languages, emotions, formats, voices and limits of text-to-speech'),
              vc: openObject({}, 'Voice conversion engines and formats'),
              separate: openObject({}, 'Stems and formats'),
              transcribe: openObject({}, 'Languages, response formats and the model'),
              limits: openObject({}, 'Upload, duration, rate and concurrency limits'),
              models: Type.Array(openObject({}, 'A catalog model and whether it is installed')),
            },
            'What this server can do',
          ),
          ...errorResponses([500]),
        },
      },
    },
    async () => options.capabilities(),
  );

  app.get(
    '/metrics',
    {
      config: options.metricsPublic ? {} : { scope: 'metrics' },
      schema: {
        summary: options.metricsPublic
          ? 'Prometheus metrics (public: VOXD_METRICS_PUBLIC=true)'
          : 'Prometheus metrics (a key with scope metrics or admin)',
        tags,
        ...(options.metricsPublic ? {} : { security: [{ bearerAuth: [] }] }),
        response: {
          200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: Type.String() } } },
          ...errorResponses(options.metricsPublic ? [500] : [...keyedErrors, 403]),
        },
      },
    },
    async (_request, reply) => reply.type(options.metrics.registry.contentType).send(await options.metrics.registry.metrics()),
  );
};

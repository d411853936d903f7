/** Health, readiness, capabilities, metrics. */
import type { FastifyPluginAsync } from 'fastify';
import type { Metrics } from '../../metrics.js';

export interface Readiness {
  ready: boolean;
  models: Array<{ id: string; operations: string[]; loaded: boolean; error?: string }>;
}

export interface SystemRoutesOptions {
  version: string;
  metrics: Metrics;
  readiness: () => Readiness;
  capabilities: () => Promise<unknown>;
}

export const systemRoutes: FastifyPluginAsync<SystemRoutesOptions> = async (app, options) => {
  const startedAt = Date.now();
  app.get('/v1/health', { schema: { summary: 'Liveness', tags: ['system'] } }, async () => ({
    status: 'ok',
    version: options.version,
    uptime_seconds: Math.round((Date.now() - startedAt) / 1000),
  }));

  app.get('/v1/ready', { schema: { summary: 'Readiness: 503 until the models of enabled operations are loaded', tags: ['system'] } }, async (_request, reply) => {
    const readiness = options.readiness();
    return reply.status(readiness.ready ? 200 : 503).send(readiness);
  });

  app.get('/v1/capabilities', { schema: { summary: 'Languages, emotions, formats, stems, limits, engines and models', tags: ['system'] } }, async () => options.capabilities());

  app.get('/metrics', { schema: { summary: 'Prometheus metrics', tags: ['system'] } }, async (_request, reply) =>
    reply.type(options.metrics.registry.contentType).send(await options.metrics.registry.metrics()));
};

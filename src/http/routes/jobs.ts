/** Jobs of the calling key (every key's for admin keys): status, list, cancel, live events; and the webhook signing secret. */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { ApiKeyService } from '../../auth/api-keys.js';
import type { JobService } from '../../jobs/service.js';
import { requestContext } from '../context.js';
import { sendEvents } from '../events.js';
import { errorResponses, keyedErrors } from '../schemas/common.js';
import { jobList, jobObject, jobParams, listJobsQuery, webhookSecret, type JobParams, type ListJobsQuery } from '../schemas/jobs.js';

const security = [{ bearerAuth: [] }];
const tags = ['jobs'];

export const jobRoutes: FastifyPluginAsync<{ jobs: JobService; apiKeys: ApiKeyService; closing: AbortSignal }> = async (
  app,
  { jobs, apiKeys, closing },
) => {
  app.get<{ Querystring: ListJobsQuery }>(
    '/v1/jobs',
    {
      config: { scope: 'any' },
      schema: {
        summary: 'Jobs of this key, newest first',
        tags,
        security,
        querystring: listJobsQuery,
        response: { 200: jobList, ...errorResponses([...keyedErrors, 422]) },
      },
    },
    async (request) => jobs.list(request.query, requestContext(request).apiKey),
  );

  app.get<{ Params: JobParams }>(
    '/v1/jobs/:job_id',
    {
      config: { scope: 'any' },
      schema: {
        summary: 'A job: status, progress, result or error, webhook attempts',
        tags,
        security,
        params: jobParams,
        response: { 200: jobObject, ...errorResponses([...keyedErrors, 404]) },
      },
    },
    async (request) => jobs.get(request.params.job_id, requestContext(request).apiKey),
  );

  app.delete<{ Params: JobParams }>(
    '/v1/jobs/:job_id',
    {
      config: { scope: 'any' },
      schema: {
        summary: 'Cancel a job: a queued one never runs, a running one stops',
        tags,
        security,
        params: jobParams,
        response: { 200: jobObject, ...errorResponses([...keyedErrors, 404]) },
      },
    },
    async (request) => jobs.cancel(request.params.job_id, requestContext(request).apiKey),
  );

  app.get<{ Params: JobParams }>(
    '/v1/jobs/:job_id/events',
    {
      config: { scope: 'any' },
      schema: {
        summary: 'Server-Sent Events: `job` events (the job object) on every change, the last one in a final state',
        tags,
        security,
        params: jobParams,
        response: {
          200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: Type.String() } } },
          ...errorResponses([...keyedErrors, 404]),
        },
      },
    },
    async (request, reply) => {
      const context = requestContext(request);
      // Looked up before the stream starts, so an unknown job is a 404 with the envelope.
      await jobs.record(request.params.job_id, context.apiKey);
      return sendEvents(reply, jobs.watch(request.params.job_id, context.apiKey, AbortSignal.any([context.signal, closing])), 'job');
    },
  );

  app.get(
    '/v1/webhook-secret',
    {
      config: { scope: 'any' },
      schema: {
        summary: 'This key’s webhook signing secret',
        tags: ['webhooks'],
        security,
        response: { 200: webhookSecret, ...errorResponses(keyedErrors) },
      },
    },
    async (request) => ({ secret: requestContext(request).apiKey.webhookSecret }),
  );

  app.post(
    '/v1/webhook-secret/rotate',
    {
      config: { scope: 'any' },
      schema: {
        summary: 'Replace this key’s webhook signing secret (deliveries from now on use the new one)',
        tags: ['webhooks'],
        security,
        response: { 200: webhookSecret, ...errorResponses(keyedErrors) },
      },
    },
    async (request) => ({ secret: await apiKeys.rotateWebhookSecret(requestContext(request).apiKey.id) }),
  );
};

/**
 * Voice profiles: scope `voices` to write, any key to read, `tts` to hear a preview. A cloned voice is its creating key's (and admin
 * keys'); to any
 * other key it does not exist (404). The scope is checked first: a key without `voices` gets 403 on writes whatever the id.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { SynthesisService } from '../../operations/synthesize/service.js';
import type { VoiceService } from '../../voices/service.js';
import { requestContext, sendResult } from '../context.js';
import { withAudioUrl } from '../schemas/audio.js';
import { errorResponses, keyedErrors } from '../schemas/common.js';
import {
  createdVoiceResponse,
  deletedVoiceResponse,
  listVoicesQuery,
  voiceListResponse,
  voiceParams,
  voicePreviewResponse,
  voiceResponse,
  type ListVoicesQuery,
  type VoiceParams,
} from '../schemas/voices.js';
import { createVoiceBody, patchVoiceBody, type CreateVoiceBody, type PatchVoiceFields } from '../../voices/contract.js';

const security = [{ bearerAuth: [] }];
const tags = ['voices'];
/** One reference clip may come as audio_url instead of files. */
const createVoiceRouteBody = withAudioUrl(createVoiceBody, 'files');

export const voiceRoutes: FastifyPluginAsync<{ voices: VoiceService; synthesis: SynthesisService }> = async (
  app,
  { voices, synthesis },
) => {
  app.post<{ Body: CreateVoiceBody }>(
    '/v1/voices',
    {
      config: { scope: 'voices', audioUrlField: 'files' },
      schema: {
        summary: 'Clone a voice from reference clips (consent required)',
        tags,
        security,
        consumes: ['multipart/form-data'],
        body: createVoiceRouteBody,
        response: { 201: createdVoiceResponse, ...errorResponses([...keyedErrors, 403, 413, 415, 422, 503]) },
      },
    },
    async (request, reply) => sendResult(reply, await voices.create(request.body, requestContext(request))),
  );

  app.get<{ Querystring: ListVoicesQuery }>(
    '/v1/voices',
    {
      config: { scope: 'any' },
      schema: {
        summary: 'Built-in and cloned voices',
        tags,
        security,
        querystring: listVoicesQuery,
        response: { 200: voiceListResponse, ...errorResponses([...keyedErrors, 422]) },
      },
    },
    async (request, reply) => sendResult(reply, await voices.list(request.query, requestContext(request).apiKey)),
  );

  app.get<{ Params: VoiceParams }>(
    '/v1/voices/:voice_id',
    {
      config: { scope: 'any' },
      schema: {
        summary: 'One voice profile',
        tags,
        security,
        params: voiceParams,
        response: { 200: voiceResponse, ...errorResponses([...keyedErrors, 404]) },
      },
    },
    async (request, reply) => sendResult(reply, await voices.get(request.params.voice_id, requestContext(request).apiKey)),
  );

  // A preview is synthesised speech: it needs the scope that speech does.
  app.get<{ Params: VoiceParams }>(
    '/v1/voices/:voice_id/preview',
    {
      config: { scope: 'tts' },
      schema: {
        summary: 'A short sample in the voice (mp3; needs scope tts)',
        tags,
        security,
        params: voiceParams,
        response: { 200: voicePreviewResponse, ...errorResponses([...keyedErrors, 403, 404, 422, 501, 503]) },
      },
    },
    async (request, reply) => sendResult(reply, await synthesis.preview(request.params.voice_id, requestContext(request))),
  );

  app.patch<{ Params: VoiceParams; Body: PatchVoiceFields }>(
    '/v1/voices/:voice_id',
    {
      config: { scope: 'voices' },
      schema: {
        summary: 'Rename, describe or label a cloned voice',
        tags,
        security,
        params: voiceParams,
        body: patchVoiceBody,
        response: { 200: voiceResponse, ...errorResponses([...keyedErrors, 403, 404, 413, 415]) },
      },
    },
    async (request, reply) => sendResult(reply, await voices.update(request.params.voice_id, request.body, requestContext(request).apiKey)),
  );

  app.delete<{ Params: VoiceParams }>(
    '/v1/voices/:voice_id',
    {
      config: { scope: 'voices' },
      schema: {
        summary: 'Delete a cloned voice with its clips, embeddings and every derived file',
        tags,
        security,
        params: voiceParams,
        response: { 200: deletedVoiceResponse, ...errorResponses([...keyedErrors, 403, 404, 413, 415]) },
      },
    },
    async (request, reply) => sendResult(reply, await voices.delete(request.params.voice_id, requestContext(request).apiKey)),
  );
};

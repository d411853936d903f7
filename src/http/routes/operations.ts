/** The four operation routes: a schema and a one-line handler each. */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { JobService } from '../../jobs/service.js';
import type { OperationRunner, RunnerName } from '../../operations/runners.js';
import { requestContext, sendResult } from '../context.js';
import { errorResponses, keyedErrors } from '../schemas/common.js';
import { acceptedJob } from '../schemas/jobs.js';
import {
  alignBody,
  alignResponse,
  separateResponse,
  speechAudio,
  timedSpeechResponse,
  transcriptionResponse,
  vcResponse,
  openaiSpeechBody,
  openaiTranscriptionBody,
  openaiTranslationBody,
  separateBody,
  dubbingBody,
  transcribeBody,
  ttsBody,
  vcBody,
} from '../schemas/audio.js';

export interface OperationRoutesOptions {
  runners: Record<RunnerName, OperationRunner>;
  jobs: JobService;
  /** False on an API-only node: synchronous calls run as jobs on the workers and are answered when they settle. */
  runLocally: boolean;
}

const operationErrors = errorResponses([...keyedErrors, 403, 413, 415, 422, 501, 503]);
/** Operations naming a voice also answer 404. */
const voiceOperationErrors = { ...operationErrors, ...errorResponses([404]) };
const security = [{ bearerAuth: [] }];
const multipart = ['multipart/form-data'];

/**
 * The handler of an operation route: runs it now, or with `async=true` / a `webhook_url` commits it as a job and answers
 * 202 with the job (Location: the job's URL).
 */
function operationHandler({ runners, jobs, runLocally }: OperationRoutesOptions, name: RunnerName) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const {
      async: asJob,
      webhook_url: webhookUrl,
      ...params
    } = request.body as Record<string, unknown> & { async?: boolean; webhook_url?: string };
    const context = requestContext(request);
    if (asJob !== true && webhookUrl === undefined)
      return sendResult(reply, await (runLocally ? runners[name].run(params, context) : jobs.runAndWait(name, params, context)));
    const job = await jobs.view(await jobs.submit(name, params, context, webhookUrl));
    return reply.status(202).header('location', job.links.self).send(job);
  };
}

export const operationRoutes: FastifyPluginAsync<OperationRoutesOptions> = async (app, options) => {
  app.post(
    '/v1/audio/tts',
    {
      config: { scope: 'tts' },
      schema: {
        summary: 'Speech from text in a voice profile',
        tags: ['audio'],
        security,
        body: ttsBody,
        response: { 200: speechAudio, 202: acceptedJob, ...voiceOperationErrors },
      },
    },
    operationHandler(options, 'tts'),
  );

  app.post(
    '/v1/audio/tts/with-timestamps',
    {
      config: { scope: 'tts' },
      schema: {
        summary: 'Speech from text with the time of every word',
        tags: ['audio'],
        security,
        body: ttsBody,
        response: { 200: timedSpeechResponse, 202: acceptedJob, ...voiceOperationErrors },
      },
    },
    operationHandler(options, 'tts-timestamps'),
  );

  app.post(
    '/v1/audio/vc',
    {
      config: { scope: 'vc', audioUrlField: 'audio' },
      schema: {
        summary: 'Re-voice a recording as a target voice',
        tags: ['audio'],
        security,
        consumes: multipart,
        body: vcBody,
        response: { 200: vcResponse, 202: acceptedJob, ...voiceOperationErrors },
      },
    },
    operationHandler(options, 'vc'),
  );

  app.post(
    '/v1/audio/separate',
    {
      config: { scope: 'separate', audioUrlField: 'audio' },
      schema: {
        summary: 'Split a soundtrack into stems',
        tags: ['audio'],
        security,
        consumes: multipart,
        body: separateBody,
        response: { 200: separateResponse, 202: acceptedJob, ...operationErrors },
      },
    },
    operationHandler(options, 'separate'),
  );

  app.post(
    '/v1/dubbing',
    {
      config: { scope: 'dub', audioUrlField: 'audio' },
      schema: {
        summary: 'Dub a recording: its speech re-voiced in English (or its own language) over its own music and effects',
        description:
          'Always a job: 202 with the job, followed at GET /v1/jobs/{id} (its Location) or its events, progress by stage ' +
          '(separating, transcribing or translating, voicing, mixing). The result: files (audio, dialogue, video for a video ' +
          'input, transcript_json, transcript_srt, transcript_vtt), voices (speaker -> voice id, cloned, temporary) and lines ' +
          '(speaker, text, source and dubbed times, tempo, gain).',
        tags: ['audio'],
        security,
        consumes: multipart,
        body: dubbingBody,
        response: { 202: acceptedJob, ...voiceOperationErrors },
      },
    },
    async (request, reply) => {
      const { webhook_url: webhookUrl, ...params } = request.body as Record<string, unknown> & { webhook_url?: string };
      const job = await options.jobs.view(await options.jobs.submit('dub', params, requestContext(request), webhookUrl));
      return reply.status(202).header('location', job.links.self).send(job);
    },
  );

  app.post(
    '/v1/audio/transcribe',
    {
      config: { scope: 'transcribe', audioUrlField: 'audio' },
      schema: {
        summary: 'Transcript with speakers, timestamps and confidence',
        tags: ['audio'],
        security,
        consumes: multipart,
        body: transcribeBody,
        response: { 200: transcriptionResponse, 202: acceptedJob, ...operationErrors },
      },
    },
    operationHandler(options, 'transcribe'),
  );
};

/** OpenAI-compatible aliases (same services, OpenAI's field names). */
export const openaiRoutes: FastifyPluginAsync<OperationRoutesOptions> = async (app, options) => {
  app.post(
    '/v1/audio/speech',
    {
      config: { scope: 'tts' },
      schema: {
        summary: 'OpenAI-compatible text-to-speech',
        tags: ['openai'],
        security,
        body: openaiSpeechBody,
        response: { 200: speechAudio, 202: acceptedJob, ...voiceOperationErrors },
      },
    },
    operationHandler(options, 'speech'),
  );

  app.post(
    '/v1/audio/align',
    {
      config: { scope: 'transcribe', audioUrlField: 'audio' },
      schema: {
        summary: 'Forced alignment: the time of every word of a given text in the audio',
        tags: ['audio'],
        security,
        consumes: multipart,
        body: alignBody,
        response: { 200: alignResponse, 202: acceptedJob, ...operationErrors },
      },
    },
    operationHandler(options, 'align'),
  );

  app.post(
    '/v1/audio/transcriptions',
    {
      config: { scope: 'transcribe', audioUrlField: 'file' },
      schema: {
        summary: 'OpenAI-compatible transcription',
        tags: ['openai'],
        security,
        consumes: multipart,
        body: openaiTranscriptionBody,
        response: { 200: transcriptionResponse, 202: acceptedJob, ...operationErrors },
      },
    },
    operationHandler(options, 'transcriptions'),
  );

  app.post(
    '/v1/audio/translations',
    {
      config: { scope: 'transcribe', audioUrlField: 'file' },
      schema: {
        summary: 'OpenAI-compatible translation into English',
        tags: ['openai'],
        security,
        consumes: multipart,
        body: openaiTranslationBody,
        response: { 200: transcriptionResponse, 202: acceptedJob, ...operationErrors },
      },
    },
    operationHandler(options, 'translations'),
  );
};

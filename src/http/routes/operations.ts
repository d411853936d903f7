/** The four operation routes: a schema and a one-line handler each. */
import type { FastifyPluginAsync } from 'fastify';
import type { SeparationService } from '../../operations/separate/service.js';
import type { SynthesisService } from '../../operations/synthesize/service.js';
import type { TranscriptionService } from '../../operations/transcribe/service.js';
import type { VoiceConversionService } from '../../operations/convert/service.js';
import { requestContext, sendResult } from '../context.js';
import { errorResponses, keyedErrors } from '../schemas/common.js';
import { separateResponse, speechAudio, transcriptionResponse, vcResponse, openaiSpeechBody, openaiTranscriptionBody, separateBody, transcribeBody, ttsBody, vcBody, type OpenaiSpeechBody, type OpenaiTranscriptionBody, type SeparateBody, type TranscribeBody, type TtsBody, type VcBody } from '../schemas/audio.js';

export interface OperationRoutesOptions {
  transcription: TranscriptionService;
  synthesis: SynthesisService;
  conversion: VoiceConversionService;
  separation: SeparationService;
}

const operationErrors = errorResponses([...keyedErrors, 403, 413, 415, 422, 501, 503]);
/** Operations naming a voice also answer 404. */
const voiceOperationErrors = { ...operationErrors, ...errorResponses([404]) };
const security = [{ bearerAuth: [] }];
const multipart = ['multipart/form-data'];

export const operationRoutes: FastifyPluginAsync<OperationRoutesOptions> = async (app, services) => {
  app.post<{ Body: TtsBody }>('/v1/audio/tts', {
    config: { scope: 'tts' },
    schema: { summary: 'Speech from text in a voice profile', tags: ['audio'], security, body: ttsBody, response: { 200: speechAudio, ...voiceOperationErrors } },
  }, async (request, reply) => sendResult(reply, await services.synthesis.synthesize(request.body, requestContext(request))));

  app.post<{ Body: VcBody }>('/v1/audio/vc', {
    config: { scope: 'vc' },
    schema: { summary: 'Re-voice a recording as a target voice', tags: ['audio'], security, consumes: multipart, body: vcBody, response: { 200: vcResponse, ...voiceOperationErrors } },
  }, async (request, reply) => sendResult(reply, await services.conversion.convert(request.body, requestContext(request))));

  app.post<{ Body: SeparateBody }>('/v1/audio/separate', {
    config: { scope: 'separate' },
    schema: { summary: 'Split a soundtrack into stems', tags: ['audio'], security, consumes: multipart, body: separateBody, response: { 200: separateResponse, ...operationErrors } },
  }, async (request, reply) => sendResult(reply, await services.separation.separate(request.body, requestContext(request))));

  app.post<{ Body: TranscribeBody }>('/v1/audio/transcribe', {
    config: { scope: 'transcribe' },
    schema: { summary: 'Transcript with speakers, timestamps and confidence', tags: ['audio'], security, consumes: multipart, body: transcribeBody, response: { 200: transcriptionResponse, ...operationErrors } },
  }, async (request, reply) => sendResult(reply, await services.transcription.transcribe(request.body, requestContext(request))));
};

/** OpenAI-compatible aliases (same services, OpenAI's field names). */
export const openaiRoutes: FastifyPluginAsync<OperationRoutesOptions> = async (app, services) => {
  app.post<{ Body: OpenaiSpeechBody }>('/v1/audio/speech', {
    config: { scope: 'tts' },
    schema: { summary: 'OpenAI-compatible text-to-speech', tags: ['openai'], security, body: openaiSpeechBody, response: { 200: speechAudio, ...voiceOperationErrors } },
  }, async (request, reply) => sendResult(reply, await services.synthesis.synthesizeOpenai(request.body, requestContext(request))));

  app.post<{ Body: OpenaiTranscriptionBody }>('/v1/audio/transcriptions', {
    config: { scope: 'transcribe' },
    schema: { summary: 'OpenAI-compatible transcription', tags: ['openai'], security, consumes: multipart, body: openaiTranscriptionBody, response: { 200: transcriptionResponse, ...operationErrors } },
  }, async (request, reply) => sendResult(reply, await services.transcription.transcribe(
    { ...request.body, timestamp_granularities: request.body['timestamp_granularities[]'] ?? request.body.timestamp_granularities },
    requestContext(request),
    { uploadField: 'file', openaiCompatible: true },
  )));
};

/**
 * GET /v1/realtime?intent=transcription: a WebSocket speaking OpenAI's transcription-session protocol over voxd's live
 * transcription. Binary messages are accepted too, as raw audio in the session's input format (a voxd extension).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';
import { decodeBase64Audio, liveAudioDecoder, type LiveAudioDecoder, type LiveInputFormat } from '../../audio/live-audio.js';
import type { VoxError } from '../../core/errors.js';
import {
  liveSampleRate,
  type LiveEvent,
  type LiveTranscriptionSession,
  type LiveTranscriptionSettings,
} from '../../operations/live-transcription/session.js';
import { defaultLiveSettings, type LiveTranscriptionService } from '../../operations/live-transcription/service.js';
import { clientEvents, type ClientEvent, type TranscriptionSessionFields } from '../schemas/realtime.js';
import { errorFields, eventParser, RealtimeConnection, type RealtimeShared } from './connection.js';

const parseEvent = eventParser<ClientEvent>(clientEvents);

export interface TranscriptionSocketOptions extends RealtimeShared {
  service: LiveTranscriptionService;
}

/** OpenAI's error event: the envelope's fields, plus the client event that caused it. */
function errorEvent(error: VoxError, clientEventId: string | null): Record<string, unknown> {
  return { type: 'error', error: { ...errorFields(error), event_id: clientEventId } };
}

export function serveTranscriptionSocket(
  socket: WebSocket,
  keyId: string,
  log: FastifyBaseLogger,
  options: TranscriptionSocketOptions,
): void {
  const sessionId = `sess_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  let session: LiveTranscriptionSession | undefined;
  let decoder: LiveAudioDecoder | undefined;
  let format: LiveInputFormat = 'pcm16';
  let modelId = '';
  const connection = new RealtimeConnection({
    kind: 'transcription',
    socket,
    keyId,
    shared: options,
    log,
    errorEvent,
    onMessage: (data, isBinary) => handle(data, isBinary),
    onClose: () => {
      session?.close();
      decoder?.close();
    },
  });
  if (!connection.open) return;

  const sessionObject = (settings: LiveTranscriptionSettings): Record<string, unknown> => ({
    id: sessionId,
    object: 'realtime.transcription_session',
    expires_at: connection.expiresAt,
    input_audio_format: format,
    input_audio_transcription: {
      model: modelId,
      language: settings.language === 'auto' ? null : settings.language,
      prompt: settings.prompt,
    },
    turn_detection: settings.turnDetection
      ? {
          type: 'server_vad',
          threshold: settings.turnDetection.threshold,
          prefix_padding_ms: Math.round(settings.turnDetection.prefixPaddingSeconds * 1000),
          silence_duration_ms: Math.round(settings.turnDetection.silenceDurationSeconds * 1000),
        }
      : null,
    input_audio_noise_reduction: null,
    include: settings.includeLogprobs ? ['item.input_audio_transcription.logprobs'] : [],
    diarize: settings.diarize,
  });

  const append = async (bytes: Buffer): Promise<void> => {
    if (!session || !decoder) return;
    const samples = decoder.decode(bytes);
    if (samples.length > 0) await session.append(samples);
  };

  const handle = async (data: Buffer, isBinary: boolean): Promise<void> => {
    if (isBinary) return append(data);
    const event = parseEvent(data);
    try {
      switch (event.type) {
        case 'transcription_session.update': {
          const settings = applyUpdate(session!.currentSettings, event.session);
          const nextFormat = event.session.input_audio_format ?? format;
          session!.update(options.service.check(settings));
          if (nextFormat !== format) {
            decoder?.close();
            decoder = await liveAudioDecoder(nextFormat, liveSampleRate);
            format = nextFormat;
          }
          connection.send({ type: 'transcription_session.updated', session: sessionObject(session!.currentSettings) });
          return;
        }
        case 'input_audio_buffer.append':
          return await append(decodeBase64Audio(event.audio, 'audio'));
        case 'input_audio_buffer.commit':
          return session!.commit();
        case 'input_audio_buffer.clear':
          return session!.clear();
      }
    } catch (error) {
      connection.reportError(error, event.event_id ?? null);
    }
  };

  // Set up before any message is handled (messages wait in the connection's queue meanwhile).
  connection.enqueue(async () => {
    try {
      modelId = await options.service.modelId();
      decoder = await liveAudioDecoder(format, liveSampleRate);
      session = await options.service.open(defaultLiveSettings, (event) => connection.send(toWire(event)));
    } catch (error) {
      connection.reportError(error, null);
      connection.close(1011, 'the transcription engine is not available');
      return;
    }
    if (!connection.open) session.close();
    connection.send({ type: 'transcription_session.created', session: sessionObject(session.currentSettings) });
  });
}

function applyUpdate(current: LiveTranscriptionSettings, fields: TranscriptionSessionFields): LiveTranscriptionSettings {
  const settings = { ...current };
  if (fields.input_audio_transcription !== undefined) {
    const transcription = fields.input_audio_transcription ?? {};
    settings.language = transcription.language ?? 'auto';
    // Derived again from the new language (the service keeps the tag as given).
    delete settings.languageTag;
    settings.prompt = transcription.prompt ?? '';
  }
  if (fields.turn_detection !== undefined) {
    const detection = fields.turn_detection;
    const base = current.turnDetection ?? defaultLiveSettings.turnDetection!;
    settings.turnDetection =
      detection === null
        ? null
        : {
            threshold: detection.threshold ?? base.threshold,
            prefixPaddingSeconds:
              detection.prefix_padding_ms !== undefined ? detection.prefix_padding_ms / 1000 : base.prefixPaddingSeconds,
            silenceDurationSeconds:
              detection.silence_duration_ms !== undefined ? detection.silence_duration_ms / 1000 : base.silenceDurationSeconds,
          };
  }
  if (fields.include !== undefined) settings.includeLogprobs = fields.include.includes('item.input_audio_transcription.logprobs');
  if (fields.diarize !== undefined) settings.diarize = fields.diarize;
  return settings;
}

/** Session events in OpenAI's names; word times, language and speaker are voxd's extension fields. */
function toWire(event: LiveEvent): Record<string, unknown> {
  switch (event.type) {
    case 'speech_started':
      return { type: 'input_audio_buffer.speech_started', audio_start_ms: event.audioStartMs, item_id: event.itemId };
    case 'speech_stopped':
      return { type: 'input_audio_buffer.speech_stopped', audio_end_ms: event.audioEndMs, item_id: event.itemId };
    case 'committed':
      return { type: 'input_audio_buffer.committed', previous_item_id: event.previousItemId, item_id: event.itemId };
    case 'cleared':
      return { type: 'input_audio_buffer.cleared' };
    case 'delta':
      return {
        type: 'conversation.item.input_audio_transcription.delta',
        item_id: event.itemId,
        content_index: 0,
        delta: event.delta,
        transcript: event.transcript,
        ...(event.logprobs ? { logprobs: event.logprobs } : {}),
      };
    case 'completed':
      return {
        type: 'conversation.item.input_audio_transcription.completed',
        item_id: event.itemId,
        content_index: 0,
        transcript: event.transcript,
        ...(event.logprobs ? { logprobs: event.logprobs } : {}),
        usage: { type: 'duration', seconds: Math.round((event.audioEndMs - event.audioStartMs) / 10) / 100 },
        language: event.language,
        words: event.words,
        audio_start_ms: event.audioStartMs,
        audio_end_ms: event.audioEndMs,
        ...(event.speaker ? { speaker: event.speaker } : {}),
      };
    case 'failed':
      return {
        type: 'conversation.item.input_audio_transcription.failed',
        item_id: event.itemId,
        content_index: 0,
        error: errorFields(event.error),
      };
  }
}

/** Client events of a realtime transcription session (OpenAI's transcription-session protocol), and client secrets. */
import { Type, type Static } from '@sinclair/typebox';
import { liveInputFormats } from '../../audio/live-audio.js';
import { dictionaryIdsField } from '../../lexicons/service.js';
import { speechStreamFormats } from '../../operations/synthesize/speech-stream.js';

const eventId = Type.Optional(Type.String({ maxLength: 256 }));

export const transcriptionSessionFields = Type.Object({
  input_audio_format: Type.Optional(Type.Union(liveInputFormats.map((f) => Type.Literal(f)))),
  input_audio_transcription: Type.Optional(
    Type.Union([
      Type.Null(),
      Type.Object({
        /** Any model name is accepted; the session runs the server's ASR model and says which. */
        model: Type.Optional(Type.String({ maxLength: 128 })),
        language: Type.Optional(Type.Union([Type.Null(), Type.String({ minLength: 1, maxLength: 32 })])),
        prompt: Type.Optional(Type.String({ maxLength: 2000 })),
      }),
    ]),
  ),
  turn_detection: Type.Optional(
    Type.Union([
      Type.Null(),
      Type.Object({
        type: Type.Literal('server_vad'),
        threshold: Type.Optional(Type.Number({ minimum: 0.05, maximum: 0.95 })),
        prefix_padding_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 5000 })),
        silence_duration_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 10000 })),
      }),
    ]),
  ),
  /** Accepted for compatibility; voxd does not denoise live input (the session says null). */
  input_audio_noise_reduction: Type.Optional(Type.Union([Type.Null(), Type.Object({})])),
  include: Type.Optional(Type.Array(Type.Literal('item.input_audio_transcription.logprobs'), { maxItems: 4 })),
  /** voxd extension: label each completed item with a speaker, consistent over the session. */
  diarize: Type.Optional(Type.Boolean()),
});
export type TranscriptionSessionFields = Static<typeof transcriptionSessionFields>;

export const clientEvents = {
  'transcription_session.update': Type.Object({
    type: Type.Literal('transcription_session.update'),
    event_id: eventId,
    session: transcriptionSessionFields,
  }),
  'input_audio_buffer.append': Type.Object({ type: Type.Literal('input_audio_buffer.append'), event_id: eventId, audio: Type.String() }),
  'input_audio_buffer.commit': Type.Object({ type: Type.Literal('input_audio_buffer.commit'), event_id: eventId }),
  'input_audio_buffer.clear': Type.Object({ type: Type.Literal('input_audio_buffer.clear'), event_id: eventId }),
} as const;
export type ClientEventType = keyof typeof clientEvents;
export type ClientEvent = { [K in ClientEventType]: Static<(typeof clientEvents)[K]> }[ClientEventType];

export const realtimeQuery = Type.Object({
  intent: Type.Optional(Type.String({ description: "Only 'transcription' (a transcription session) is served." })),
  model: Type.Optional(Type.String()),
});
export type RealtimeQuery = Static<typeof realtimeQuery>;

export const clientSecretRequest = Type.Object({
  expires_after: Type.Optional(
    Type.Object({
      anchor: Type.Optional(Type.Literal('created_at')),
      seconds: Type.Integer({ minimum: 10, maximum: 7200, description: 'Lifetime of the secret (default 600).' }),
    }),
  ),
});
export type ClientSecretRequest = Static<typeof clientSecretRequest>;

export const clientSecret = Type.Object(
  {
    value: Type.String({ description: 'ek_... : pass it as the key of a realtime socket (Authorization header or subprotocol).' }),
    expires_at: Type.Integer({ description: 'Unix seconds.' }),
    scopes: Type.Array(Type.String()),
  },
  { $id: 'ClientSecret' },
);

/** Client messages of the speech socket (GET /v1/audio/tts/stream). */
export const speechClientEvents = {
  start: Type.Object({
    type: Type.Literal('start'),
    voice_id: Type.String({ minLength: 1, maxLength: 100 }),
    language: Type.Optional(Type.String({ minLength: 2, maxLength: 32 })),
    emotion: Type.Optional(Type.String({ maxLength: 32 })),
    speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4 })),
    format: Type.Optional(Type.Union(speechStreamFormats.map((f) => Type.Literal(f)))),
    /** pcm16 only (mp3 and opus use their codec's rate). */
    sample_rate: Type.Optional(Type.Integer({ minimum: 8000, maximum: 48000 })),
    pronunciation_dictionary_ids: Type.Optional(dictionaryIdsField),
  }),
  text: Type.Object({ type: Type.Literal('text'), text: Type.String({ maxLength: 5000 }) }),
  flush: Type.Object({ type: Type.Literal('flush') }),
  cancel: Type.Object({ type: Type.Literal('cancel') }),
  close: Type.Object({ type: Type.Literal('close') }),
} as const;
export type SpeechClientEvent = {
  [K in keyof typeof speechClientEvents]: Static<(typeof speechClientEvents)[K]>;
}[keyof typeof speechClientEvents];

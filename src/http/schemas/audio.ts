/** Request schemas (TypeBox): validation and the OpenAPI document come from the same definitions. */
import { Type, type Static } from '@sinclair/typebox';
import { audioFormats } from '../../audio/encode.js';
import { transcriptionResponseFormats } from '../../operations/transcribe/service.js';
import { emotions } from '../../operations/synthesize/service.js';
import { stemFormats } from '../../operations/separate/service.js';

/** A multipart file field. The body carries a marker string; the file itself is streamed to disk (see uploads.ts). */
const fileField = (description: string) => Type.String({ format: 'binary', description });
const closedSet = <T extends string>(values: readonly T[], description: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], description });
const sampleRate = Type.Integer({ minimum: 8000, maximum: 192000, description: 'Output sample rate in Hz (default: see each route).' });

export const transcribeBody = Type.Object({
  audio: fileField('Audio or video file in any format ffmpeg decodes.'),
  language: Type.Optional(Type.String({ description: "ISO 639-1 code (BCP-47 accepted, region ignored) or 'auto' (default)." })),
  diarize: Type.Optional(Type.Boolean({ default: false, description: 'Label speakers.' })),
  num_speakers: Type.Optional(Type.Integer({ minimum: 1, maximum: 32 })),
  min_speakers: Type.Optional(Type.Integer({ minimum: 1, maximum: 32 })),
  max_speakers: Type.Optional(Type.Integer({ minimum: 1, maximum: 32 })),
  response_format: Type.Optional(closedSet(transcriptionResponseFormats, 'json (default), verbose_json, srt, vtt or text.')),
  timestamp_granularities: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description: 'segment and/or word.' })),
  prompt: Type.Optional(Type.String({ maxLength: 2000, description: 'Initial prompt: spelling and vocabulary hints.' })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
});
export type TranscribeBody = Static<typeof transcribeBody>;

/** OpenAI's /v1/audio/transcriptions form, so the official SDKs work unchanged. */
export const openaiTranscriptionBody = Type.Object({
  file: fileField('Audio file.'),
  model: Type.Optional(Type.String({ description: 'Accepted for compatibility; the server uses its configured ASR model.' })),
  language: Type.Optional(Type.String()),
  prompt: Type.Optional(Type.String({ maxLength: 2000 })),
  response_format: Type.Optional(closedSet(transcriptionResponseFormats, 'json (default), verbose_json, srt, vtt or text.')),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  'timestamp_granularities[]': Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  timestamp_granularities: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
});
export type OpenaiTranscriptionBody = Static<typeof openaiTranscriptionBody>;

export const ttsBody = Type.Object({
  text: Type.String({ description: 'Text to speak (1-5000 characters).' }),
  voice_id: Type.String({ minLength: 1, description: 'A voice profile id (GET /v1/voices).' }),
  language: Type.Optional(Type.String({ description: 'Language code; default: the voice profile’s first language.' })),
  emotion: Type.Optional(closedSet(emotions, 'Speaking style.')),
  speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4, default: 1 })),
  format: Type.Optional(closedSet(audioFormats, 'Output encoding (default mp3).')),
  sample_rate: Type.Optional(sampleRate),
  stream: Type.Optional(Type.Boolean({ default: false, description: 'Send audio in chunks as sentences are ready.' })),
}, { additionalProperties: false });
export type TtsBody = Static<typeof ttsBody>;

/** OpenAI's /v1/audio/speech body, so the official SDKs work unchanged. */
export const openaiSpeechBody = Type.Object({
  model: Type.Optional(Type.String({ description: 'Accepted for compatibility; the engine follows the voice.' })),
  input: Type.String({ description: 'Text to speak (1-5000 characters).' }),
  voice: Type.String({ minLength: 1, description: "OpenAI voice names map to Kokoro voices (alloy -> af_alloy, ...); any voice_id works too." }),
  response_format: Type.Optional(closedSet(audioFormats, 'mp3 (default), opus, aac, flac, wav or pcm.')),
  speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4 })),
  instructions: Type.Optional(Type.String({ maxLength: 2000, description: 'Mapped to an emotion by keywords (e.g. cheerful -> happy, whisper -> whisper).' })),
  stream_format: Type.Optional(Type.String()),
});
export type OpenaiSpeechBody = Static<typeof openaiSpeechBody>;

export const vcBody = Type.Object({
  audio: fileField('Recording to re-voice.'),
  target_voice_id: Type.String({ minLength: 1 }),
  preserve_emotion: Type.Optional(Type.Boolean({ default: true })),
  format: Type.Optional(closedSet(audioFormats, 'Output encoding (default wav).')),
  sample_rate: Type.Optional(sampleRate),
  response_format: Type.Optional(closedSet(['audio', 'json'] as const, 'audio (default) or json with metrics.')),
});
export type VcBody = Static<typeof vcBody>;

export const separateBody = Type.Object({
  audio: fileField('Mixed soundtrack.'),
  stems: Type.Optional(Type.String({ description: 'Comma list of dialogue, music, sfx, ambience; empty = all.' })),
  format: Type.Optional(closedSet(stemFormats, 'Stem encoding (default wav).')),
  sample_rate: Type.Optional(sampleRate),
  response_format: Type.Optional(closedSet(['json', 'zip'] as const, 'json (download URLs, default) or zip.')),
});
export type SeparateBody = Static<typeof separateBody>;

export const errorEnvelope = Type.Object({
  error: Type.Object({
    type: Type.String(),
    code: Type.String(),
    message: Type.String(),
    param: Type.Union([Type.String(), Type.Null()]),
    request_id: Type.String(),
  }),
}, { $id: 'ErrorEnvelope' });

/** Request schemas (TypeBox): validation and the OpenAPI document come from the same definitions. */
import { Type, type Static } from '@sinclair/typebox';
import { audioFormats, contentTypes } from '../../audio/encode.js';
import { maxKeytermCharacters, maxKeyterms } from '../../operations/transcribe/keyterms.js';
import { maxSpeakerVoices, transcriptionResponseFormats, transcriptionTasks } from '../../operations/transcribe/service.js';
import { emotions, maxTextCharacters } from '../../operations/synthesize/service.js';
import { stemFormats } from '../../operations/separate/service.js';
import { binaryContent, maxIdLength, openObject } from './common.js';
import { jobFields } from './jobs.js';

/** A multipart file field. The body carries a marker string; the file itself is streamed to disk (see uploads.ts). */
const fileField = (description: string) => Type.String({ format: 'binary', description });
const closedSet = <T extends string>(values: readonly T[], description: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], description });
/** BCP-47 tags in practice stay far below this. */
export const maxLanguageLength = 35;
const granularities = Type.Union([Type.String({ maxLength: 20 }), Type.Array(Type.String({ maxLength: 20 }), { maxItems: 2 })], { description: 'segment and/or word.' });
const sampleRate = Type.Integer({ minimum: 8000, maximum: 192000, description: 'Output sample rate in Hz (default: see each route).' });

export const transcribeBody = Type.Object({
  audio: fileField('Audio or video file in any format ffmpeg decodes.'),
  language: Type.Optional(Type.String({ maxLength: maxLanguageLength, description: "ISO 639-1 code (BCP-47 accepted, region ignored) or 'auto' (default)." })),
  task: Type.Optional(closedSet(transcriptionTasks, 'transcribe (default) or translate: English text whatever the spoken language; language then names the source language.')),
  diarize: Type.Optional(Type.Boolean({ default: false, description: 'Label speakers.' })),
  num_speakers: Type.Optional(Type.Integer({ minimum: 1, maximum: 32 })),
  min_speakers: Type.Optional(Type.Integer({ minimum: 1, maximum: 32 })),
  max_speakers: Type.Optional(Type.Integer({ minimum: 1, maximum: 32 })),
  response_format: Type.Optional(closedSet(transcriptionResponseFormats, 'json (default), verbose_json, srt, vtt or text.')),
  timestamp_granularities: Type.Optional(granularities),
  prompt: Type.Optional(Type.String({ maxLength: 2000, description: 'Initial prompt: spelling and vocabulary hints.' })),
  // Bounds against abuse only: the service checks the limits, so a 400 names keyterms whichever form the list came in.
  keyterms: Type.Optional(Type.Union([Type.String({ maxLength: 20_000 }), Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 1000 })], {
    description: `Words or phrases expected in the audio (names, jargon): up to ${maxKeyterms}, each up to ${maxKeytermCharacters} characters; the field repeated, or one value with a JSON array or a comma list. They bias the decoding, near misses are corrected to them, and found_keyterms reports them.`,
  })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  speaker_voice_ids: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Array(Type.String({ maxLength: maxIdLength }), { maxItems: maxSpeakerVoices })], {
    description: `Cloned voice profiles to name the speakers after (comma list or repeated field, at most ${maxSpeakerVoices}; needs diarize=true): a matched speaker gets speaker_name and voice_id.`,
  })),
  ...jobFields,
});
export type TranscribeBody = Static<typeof transcribeBody>;

/** OpenAI's /v1/audio/transcriptions form, so the official SDKs work unchanged. */
export const openaiTranscriptionBody = Type.Object({
  file: fileField('Audio file.'),
  model: Type.Optional(Type.String({ maxLength: 200, description: 'Accepted for compatibility; the server uses its configured ASR model.' })),
  language: Type.Optional(Type.String({ maxLength: maxLanguageLength })),
  prompt: Type.Optional(Type.String({ maxLength: 2000 })),
  response_format: Type.Optional(closedSet(transcriptionResponseFormats, 'json (default), verbose_json, srt, vtt or text.')),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  'timestamp_granularities[]': Type.Optional(granularities),
  timestamp_granularities: Type.Optional(granularities),
  ...jobFields,
});
export type OpenaiTranscriptionBody = Static<typeof openaiTranscriptionBody>;

/** OpenAI's /v1/audio/translations form: English text from speech in any language. */
export const openaiTranslationBody = Type.Object({
  file: fileField('Audio file.'),
  model: Type.Optional(Type.String({ maxLength: 200, description: 'Accepted for compatibility; the server uses its configured ASR model.' })),
  prompt: Type.Optional(Type.String({ maxLength: 2000, description: 'Initial prompt, in English.' })),
  response_format: Type.Optional(closedSet(transcriptionResponseFormats, 'json (default), verbose_json, srt, vtt or text.')),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  ...jobFields,
});
export type OpenaiTranslationBody = Static<typeof openaiTranslationBody>;

export const ttsBody = Type.Object({
  text: Type.String({ minLength: 1, maxLength: maxTextCharacters, description: `Text to speak (1-${maxTextCharacters} characters).` }),
  voice_id: Type.String({ minLength: 1, maxLength: maxIdLength, description: 'A voice profile id (GET /v1/voices).' }),
  language: Type.Optional(Type.String({ maxLength: maxLanguageLength, description: 'Language code; default: the voice profile’s first language.' })),
  emotion: Type.Optional(closedSet(emotions, 'Speaking style.')),
  speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4, default: 1 })),
  format: Type.Optional(closedSet(audioFormats, 'Output encoding (default mp3).')),
  sample_rate: Type.Optional(sampleRate),
  stream: Type.Optional(Type.Boolean({ default: false, description: 'Send audio in chunks as sentences are ready.' })),
  ...jobFields,
}, { additionalProperties: false });
export type TtsBody = Static<typeof ttsBody>;

/** OpenAI's /v1/audio/speech body, so the official SDKs work unchanged. */
export const openaiSpeechBody = Type.Object({
  model: Type.Optional(Type.String({ maxLength: 200, description: 'Accepted for compatibility; the engine follows the voice.' })),
  input: Type.String({ minLength: 1, maxLength: maxTextCharacters, description: `Text to speak (1-${maxTextCharacters} characters).` }),
  voice: Type.String({ minLength: 1, maxLength: maxIdLength, description: "OpenAI voice names map to Kokoro voices (alloy -> af_alloy, ...); any voice_id works too." }),
  response_format: Type.Optional(closedSet(audioFormats, 'mp3 (default), opus, aac, flac, wav or pcm.')),
  speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4 })),
  instructions: Type.Optional(Type.String({ maxLength: 2000, description: 'Mapped to an emotion by keywords (e.g. cheerful -> happy, whisper -> whisper).' })),
  stream_format: Type.Optional(Type.String({ maxLength: 20, description: 'Accepted for compatibility; audio is sent as one response.' })),
  ...jobFields,
});
export type OpenaiSpeechBody = Static<typeof openaiSpeechBody>;

export const vcBody = Type.Object({
  audio: fileField('Recording to re-voice.'),
  target_voice_id: Type.String({ minLength: 1, maxLength: maxIdLength }),
  preserve_emotion: Type.Optional(Type.Boolean({ default: true })),
  format: Type.Optional(closedSet(audioFormats, 'Output encoding (default wav).')),
  sample_rate: Type.Optional(sampleRate),
  response_format: Type.Optional(closedSet(['audio', 'json'] as const, 'audio (default) or json with metrics.')),
  ...jobFields,
});
export type VcBody = Static<typeof vcBody>;

export const separateBody = Type.Object({
  audio: fileField('Mixed soundtrack.'),
  stems: Type.Optional(Type.String({ maxLength: 200, description: 'Comma list of dialogue, music, sfx, ambience; empty = all.' })),
  format: Type.Optional(closedSet(stemFormats, 'Stem encoding (default wav).')),
  sample_rate: Type.Optional(sampleRate),
  response_format: Type.Optional(closedSet(['json', 'zip'] as const, 'json (download URLs, default) or zip.')),
  ...jobFields,
});
export type SeparateBody = Static<typeof separateBody>;

export const speechAudio = { description: 'Speech in the requested format', content: binaryContent(Object.values(contentTypes)) };

const vcJson = openObject({
  url: Type.String({ description: 'Download of the converted audio (GET, same key)' }),
  expires_at: Type.String({ format: 'date-time' }),
  duration: Type.Number(),
  sample_rate: Type.Integer(),
  warnings: Type.Array(Type.String()),
}, 'The converted file and similarity metrics');
export const vcResponse = {
  description: 'The re-voiced recording, or with response_format=json its download URL and similarity metrics',
  content: { ...binaryContent(Object.values(contentTypes)), 'application/json': { schema: vcJson } },
};

const separateJson = openObject({
  id: Type.String(),
  duration: Type.Number(),
  sample_rate: Type.Integer(),
  channels: Type.Integer(),
  stems: Type.Array(openObject({ name: Type.String(), url: Type.String(), expires_at: Type.String({ format: 'date-time' }) }, 'One stem: download URL and levels')),
  warnings: Type.Array(Type.String()),
}, 'Stem download URLs');
export const separateResponse = {
  description: 'Stems: download URLs (json, default) or one zip archive',
  content: { 'application/json': { schema: separateJson }, ...binaryContent(['application/zip']) },
};

const transcriptionJson = openObject({ text: Type.String() }, 'The transcript: text, and per response_format segments, words, speakers, language');
export const transcriptionResponse = {
  description: 'The transcript in the requested response_format',
  content: {
    'application/json': { schema: transcriptionJson },
    'text/plain': { schema: Type.String() },
    'application/x-subrip': { schema: Type.String() },
    'text/vtt': { schema: Type.String() },
  },
};

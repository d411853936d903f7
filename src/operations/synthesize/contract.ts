/** What speech synthesis takes: our fields, and OpenAI's speech body (an alias onto ours). */
import { Type, type Static } from '@sinclair/typebox';
import { audioFormats } from '../../audio/encode.js';
import { closedSet, maxIdLength, maxLanguageLength, sampleRateField } from '../../core/contract-fields.js';
import { dictionaryIdsField } from '../../lexicons/service.js';
import { emotions } from './emotion.js';

export const maxTextCharacters = 5000;
const text = (description: string) => Type.String({ minLength: 1, maxLength: maxTextCharacters, description });

export const synthesizeContract = Type.Object({
  text: text(`Text to speak (1-${maxTextCharacters} characters).`),
  voice_id: Type.String({ minLength: 1, maxLength: maxIdLength, description: 'A voice profile id (GET /v1/voices).' }),
  language: Type.Optional(
    Type.String({ maxLength: maxLanguageLength, description: 'Language code; default: the voice profile’s first language.' }),
  ),
  emotion: Type.Optional(closedSet(emotions, 'Speaking style.')),
  speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4, default: 1 })),
  format: Type.Optional(closedSet(audioFormats, 'Output encoding (default mp3).')),
  sample_rate: Type.Optional(sampleRateField),
  stream: Type.Optional(Type.Boolean({ default: false, description: 'Send audio in chunks as sentences are ready.' })),
  pronunciation_dictionary_ids: Type.Optional(dictionaryIdsField),
});
export type SynthesizeFields = Static<typeof synthesizeContract>;

/** OpenAI's /v1/audio/speech body, so the official SDKs work unchanged. */
export const openaiSpeechContract = Type.Object({
  model: Type.Optional(Type.String({ maxLength: 200, description: 'Accepted for compatibility; the engine follows the voice.' })),
  input: text(`Text to speak (1-${maxTextCharacters} characters).`),
  voice: Type.String({
    minLength: 1,
    maxLength: maxIdLength,
    description: 'OpenAI voice names map to Kokoro voices (alloy -> af_alloy, ...); any voice_id works too.',
  }),
  pronunciation_dictionary_ids: Type.Optional(dictionaryIdsField),
  response_format: Type.Optional(closedSet(audioFormats, 'mp3 (default), opus, aac, flac, wav or pcm.')),
  speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4 })),
  instructions: Type.Optional(
    Type.String({ maxLength: 2000, description: 'Mapped to an emotion by keywords (e.g. cheerful -> happy, whisper -> whisper).' }),
  ),
  stream_format: Type.Optional(
    Type.String({
      maxLength: 20,
      description:
        "audio (default): the audio as one response; sse: OpenAI's speech.audio.delta events as the audio is made, then speech.audio.done.",
    }),
  ),
});
export type OpenaiSpeechFields = Static<typeof openaiSpeechContract>;

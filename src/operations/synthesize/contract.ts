/** What speech synthesis takes: our fields, and OpenAI's speech body (an alias onto ours). */
import { Type, type Static } from '@sinclair/typebox';
import { audioFormats } from '../../audio/encode.js';
import { closedSet, maxIdLength, maxLanguageLength, sampleRateField } from '../../core/contract-fields.js';
import { dictionaryIdsField } from '../../lexicons/service.js';
import { emotions } from './emotion.js';

export const maxTextCharacters = 5000;
/** SSML's markup is not counted against maxTextCharacters (its text is); this bounds the document itself. */
export const maxSsmlCharacters = 4 * maxTextCharacters;
const text = (description: string) => Type.String({ minLength: 1, maxLength: maxSsmlCharacters, description });
const ssmlElements =
  'Supported SSML: break (time, strength), p, s, sub (alias), phoneme (alphabet ipa|x-sampa, ph), say-as (interpret-as ' +
  'characters|spell-out|cardinal|ordinal|digits|date|time|telephone), prosody (rate, volume, pitch: x-low..x-high, ±N st ' +
  'or ±N%; Piper cannot shift pitch and says so in x-voxd-warnings), emphasis, lang (xml:lang: another engine speaks the stretch where the voice cannot), voice ' +
  '(name: a voice id), mark (name: its time in the with-timestamps answer).';
const textDescription = `Text to speak (1-${maxTextCharacters} characters of text), or an SSML document starting with <speak> (its markup not counted). ${ssmlElements}`;

export const synthesizeContract = Type.Object({
  text: text(textDescription),
  text_type: Type.Optional(closedSet(['text', 'ssml'] as const, 'ssml: read `text` as SSML (default: SSML when it starts with <speak>).')),
  voice_id: Type.String({
    minLength: 1,
    maxLength: maxIdLength,
    description:
      'A voice profile id (GET /v1/voices), or a blend written id*weight+id*weight of Kokoro voices, cloned voices of this ' +
      "key (each entering as its mix of Kokoro voices of the blend's language) and stored blends, e.g. af_bella*0.5+voice_...*0.5.",
  }),
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
  input: text(textDescription),
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

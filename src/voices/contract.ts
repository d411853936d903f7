/** What creating and changing a voice profile take: the route's schemas and the service's field types, declared once. */
import { Type, type Static } from '@sinclair/typebox';
import { maxIdLength, maxLanguageLength } from '../core/contract-fields.js';
import { voicePurposes, type VoicePurpose } from '../core/records.js';

const fileField = Type.String({ format: 'binary' });

export const createVoiceBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  files: Type.Optional(
    Type.Union([fileField, Type.Array(fileField, { minItems: 1, maxItems: 25 })], {
      description:
        'Reference clips (any decodable format): 3 s to 10 min of speech, and at most 15 min of audio, in total. Required unless blend is given.',
    }),
  ),
  blend: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: maxIdLength,
      description:
        'Instead of files: a weighted mix of Kokoro voices (built-in, cloned or stored blends) to store under name, e.g. ' +
        'af_bella*0.6+am_adam*0.4 or af_bella*0.5+voice_...*0.5 (weights are normalised). A cloned voice must be this ' +
        "key's (else 404) and enters as its mix of Kokoro voices; the blend speaks its first voice's language, which Kokoro " +
        'must speak when no language is asked for (else 422). Needs no consent.',
    }),
  ),
  language: Type.Optional(Type.String({ maxLength: maxLanguageLength, description: 'Main language of the speaker (ISO 639-1).' })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  labels: Type.Optional(Type.String({ maxLength: 10000, description: 'JSON object of string labels, e.g. {"accent": "scottish"}.' })),
  consent: Type.Optional(
    Type.Boolean({
      description: 'Must be true: the caller asserts the speaker agreed to be cloned (or, with purpose=identify, recognised).',
    }),
  ),
  purpose: Type.Optional(
    Type.Unsafe<VoicePurpose>({
      type: 'string',
      enum: [...voicePurposes],
      description:
        'speech (default): a voice to speak in and to name speakers; identify: only to name speakers in transcripts (speaker_voice_ids).',
    }),
  ),
});
export type CreateVoiceBody = Static<typeof createVoiceBody>;
/** What the service reads of a creation (the clips arrive as the operation's input files). */
export type CreateVoiceFields = Omit<CreateVoiceBody, 'files'>;

export const patchVoiceBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    labels: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 1000 }))),
  },
  { additionalProperties: false },
);
export type PatchVoiceFields = Static<typeof patchVoiceBody>;

import { Type, type Static } from '@sinclair/typebox';
import { maxIdLength, maxLanguageLength } from '../../core/contract-fields.js';
import { binaryContent, openObject } from './common.js';
import { voicePurposes, type VoicePurpose } from '../../core/records.js';

const fileField = Type.String({ format: 'binary' });

export const createVoiceBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  files: Type.Union([fileField, Type.Array(fileField, { minItems: 1, maxItems: 25 })], {
    description: 'Reference clips (any decodable format): 3 s to 10 min of speech, and at most 15 min of audio, in total.',
  }),
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

export const patchVoiceBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    labels: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 1000 }))),
  },
  { additionalProperties: false },
);
export type PatchVoiceBody = Static<typeof patchVoiceBody>;

export const listVoicesQuery = Type.Object({
  language: Type.Optional(Type.String({ maxLength: maxLanguageLength })),
  type: Type.Optional(Type.Unsafe<'builtin' | 'cloned'>({ type: 'string', enum: ['builtin', 'cloned'] })),
});
export type ListVoicesQuery = Static<typeof listVoicesQuery>;

export const voiceParams = Type.Object({ voice_id: Type.String({ maxLength: maxIdLength }) });
export type VoiceParams = Static<typeof voiceParams>;

const voiceProfile = openObject(
  {
    voice_id: Type.String(),
    name: Type.String(),
    type: Type.Unsafe<'builtin' | 'cloned'>({ type: 'string', enum: ['builtin', 'cloned'] }),
    languages: Type.Array(Type.String()),
    gender_estimate: Type.Union([Type.Literal('female'), Type.Literal('male'), Type.Null()]),
    created_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    description: Type.String(),
    labels: Type.Record(Type.String(), Type.String()),
    reference_seconds: Type.Number(),
    engine: Type.String(),
    purpose: Type.Unsafe<VoicePurpose>({ type: 'string', enum: [...voicePurposes] }),
  },
  'A voice profile',
);
export const voiceResponse = { ...voiceProfile, description: 'The voice profile' };
export const createdVoiceResponse = { ...voiceProfile, description: 'The new voice profile' };
export const voiceListResponse = Type.Object({ voices: Type.Array(voiceProfile) }, { description: 'Built-in and cloned voices' });
export const deletedVoiceResponse = Type.Object(
  { voice_id: Type.String(), deleted: Type.Literal(true) },
  { description: 'The voice and its files are gone' },
);
export const voicePreviewResponse = { description: 'A short sample in the voice', content: binaryContent(['audio/mpeg']) };

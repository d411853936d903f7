import { Type, type Static } from '@sinclair/typebox';

const fileField = Type.String({ format: 'binary' });

export const createVoiceBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  files: Type.Union([fileField, Type.Array(fileField, { minItems: 1, maxItems: 25 })], { description: 'Reference clips (any decodable format): 3 s to 10 min of speech, and at most 15 min of audio, in total.' }),
  language: Type.Optional(Type.String({ description: 'Main language of the speaker (ISO 639-1).' })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  labels: Type.Optional(Type.String({ description: 'JSON object of string labels, e.g. {"accent": "scottish"}.' })),
  consent: Type.Optional(Type.Boolean({ description: 'Must be true: the caller asserts the speaker agreed to be cloned.' })),
});
export type CreateVoiceBody = Static<typeof createVoiceBody>;

export const patchVoiceBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  labels: Type.Optional(Type.Record(Type.String(), Type.String())),
}, { additionalProperties: false });
export type PatchVoiceBody = Static<typeof patchVoiceBody>;

export const listVoicesQuery = Type.Object({
  language: Type.Optional(Type.String()),
  type: Type.Optional(Type.Unsafe<'builtin' | 'cloned'>({ type: 'string', enum: ['builtin', 'cloned'] })),
});
export type ListVoicesQuery = Static<typeof listVoicesQuery>;

export const voiceParams = Type.Object({ voice_id: Type.String() });
export type VoiceParams = Static<typeof voiceParams>;

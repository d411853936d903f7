import { Type, type Static } from '@sinclair/typebox';
import { maxIdLength, maxLanguageLength } from '../../core/contract-fields.js';
import { binaryContent, openObject } from './common.js';
import { voicePurposes, type VoicePurpose } from '../../core/records.js';

export const listVoicesQuery = Type.Object({
  language: Type.Optional(Type.String({ maxLength: maxLanguageLength })),
  type: Type.Optional(Type.Unsafe<'builtin' | 'cloned' | 'blend'>({ type: 'string', enum: ['builtin', 'cloned', 'blend'] })),
});
export type ListVoicesQuery = Static<typeof listVoicesQuery>;

export const voiceParams = Type.Object({ voice_id: Type.String({ maxLength: maxIdLength }) });
export type VoiceParams = Static<typeof voiceParams>;

const voiceProfile = openObject(
  {
    voice_id: Type.String(),
    name: Type.String(),
    type: Type.Unsafe<'builtin' | 'cloned' | 'blend'>({ type: 'string', enum: ['builtin', 'cloned', 'blend'] }),
    languages: Type.Array(Type.String()),
    gender_estimate: Type.Union([Type.Literal('female'), Type.Literal('male'), Type.Null()]),
    created_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    description: Type.String(),
    labels: Type.Record(Type.String(), Type.String()),
    reference_seconds: Type.Number(),
    engine: Type.String(),
    purpose: Type.Unsafe<VoicePurpose>({ type: 'string', enum: [...voicePurposes] }),
    blend: Type.Optional(
      Type.Array(Type.Object({ voice_id: Type.String(), weight: Type.Number() }), {
        description: "A blend's voices (stored blends expanded), weights summing to 1.",
      }),
    ),
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

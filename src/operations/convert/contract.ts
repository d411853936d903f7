/** What voice conversion takes. */
import { Type, type Static } from '@sinclair/typebox';
import { audioFormats } from '../../audio/encode.js';
import { closedSet, fileField, maxIdLength, sampleRateField } from '../../core/contract-fields.js';

export const convertContract = Type.Object({
  audio: fileField('Recording to re-voice.'),
  target_voice_id: Type.String({ minLength: 1, maxLength: maxIdLength }),
  preserve_emotion: Type.Optional(Type.Boolean({ default: true })),
  format: Type.Optional(closedSet(audioFormats, 'Output encoding (default wav).')),
  sample_rate: Type.Optional(sampleRateField),
  response_format: Type.Optional(closedSet(['audio', 'json'] as const, 'audio (default) or json with metrics.')),
});
/** The fields the service reads: the file itself reaches it as an upload. */
export const convertFields = Type.Omit(convertContract, ['audio']);
export type ConvertFields = Static<typeof convertFields>;

/** What separation takes. */
import { Type, type Static } from '@sinclair/typebox';
import { closedSet, fileField, sampleRateField } from '../../core/contract-fields.js';

export const stemFormats = ['wav', 'flac', 'mp3', 'opus'] as const;
export type StemFormat = (typeof stemFormats)[number];

export const separateContract = Type.Object({
  audio: fileField('Mixed soundtrack.'),
  stems: Type.Optional(Type.String({ maxLength: 200, description: 'Comma list of dialogue, music, sfx, ambience; empty = all.' })),
  format: Type.Optional(closedSet(stemFormats, 'Stem encoding (default wav).')),
  sample_rate: Type.Optional(sampleRateField),
  response_format: Type.Optional(closedSet(['json', 'zip'] as const, 'json (download URLs, default) or zip.')),
});
/** The fields the service reads: the file itself reaches it as an upload. */
export const separateFields = Type.Omit(separateContract, ['audio']);
export type SeparateFields = Static<typeof separateFields>;

/** POST /v1/audio/separate: validation and orchestration. The engine plugs in behind `Separator`. */
import { admitAudio, uploadedFile, type AudioLimits } from '../../audio/input.js';
import { unsupportedValue, VoxError } from '../../errors.js';
import type { OperationResult, RequestContext } from '../../http/context.js';

export const stemNames = ['dialogue', 'music', 'sfx', 'ambience'] as const;
export type StemName = (typeof stemNames)[number];
export const stemFormats = ['wav', 'flac', 'mp3', 'opus'] as const;

export interface SeparateFields {
  stems?: string;
  format?: string;
  sample_rate?: number;
  response_format?: string;
}

/** 'dialogue, music' -> ['dialogue', 'music']; empty -> all; duplicates ignored; unknown -> 422. */
export function parseStems(text: string | undefined): StemName[] {
  const requested = (text ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  for (const name of requested) if (!(stemNames as readonly string[]).includes(name)) throw unsupportedValue('stems', name, stemNames);
  return requested.length === 0 ? [...stemNames] : stemNames.filter((name) => requested.includes(name));
}

export class SeparationService {
  constructor(private readonly limits: AudioLimits) {}

  capabilities() {
    return { available: false, stems: [...stemNames], formats: [...stemFormats], response_formats: ['json', 'zip'] };
  }

  async separate(fields: SeparateFields, context: RequestContext): Promise<OperationResult> {
    parseStems(fields.stems);
    await admitAudio(uploadedFile(context.uploads, 'audio'), this.limits, context.signal);
    throw new VoxError('not_implemented', 'Separation is not available yet on this server: its engine has not landed.');
  }
}

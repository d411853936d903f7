/** The separation engine interface. */
import type { Waveform } from '../../audio/waveform.js';

export const stemNames = ['dialogue', 'music', 'sfx', 'ambience'] as const;
export type StemName = (typeof stemNames)[number];

export interface SeparationResult {
  /** Each requested stem at the input's rate, length and channel count. All four stems together sum to the input. */
  stems: Partial<Record<StemName, Waveform>>;
  warnings: string[];
}

export interface Separator {
  engine: string;
  modelId: string;
  separate(input: Waveform, options: { stems: StemName[]; signal?: AbortSignal }): Promise<SeparationResult>;
}

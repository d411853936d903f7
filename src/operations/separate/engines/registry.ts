/** The separation engine: dialogue from DeepFilterNet3 and DTLN, music from Spleeter's accompaniment (soundtrack.ts). */
import type { EngineEntry } from '../../../models/loaded.js';
import type { Separator } from '../separator.js';

export const separationEngine: EngineEntry<Separator> = {
  id: 'deepfilternet3+dtln',
  operations: ['separate'],
  modelIds: ['deepfilternet3', 'dtln', 'spleeter-2stems'],
  load: async ({ dir }) => (await import('./soundtrack.js')).SoundtrackSeparator.load(dir),
  release: async (engine) => engine.close(),
};

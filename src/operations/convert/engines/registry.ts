/** The voice-conversion engine: WORLD analysis and resynthesis with a spectral-envelope warp (world-dsp.ts). */
import type { EngineEntry } from '../../../models/loaded.js';
import type { SpeakerEncoder } from '../../../speakers/embedding.js';
import type { VoiceConverter } from '../voice-converter.js';

/** `speakerEncoder`: its speaker embeddings choose the envelope warp. */
export function conversionEngine(speakerEncoder: () => Promise<SpeakerEncoder>): EngineEntry<VoiceConverter> {
  return {
    id: 'world-dsp',
    operations: ['vc'],
    modelIds: [],
    load: async () => {
      const [{ World, defaultWorldAddonPath }, { WorldDspConverter }] = await Promise.all([
        import('../../../audio/world.js'),
        import('./world-dsp.js'),
      ]);
      return new WorldDspConverter(World.load(defaultWorldAddonPath()), await speakerEncoder());
    },
  };
}

/**
 * The voice-conversion engines: WORLD analysis and resynthesis with a spectral-envelope warp (world-dsp.ts, the default)
 * and kNN matching of target frames on Whisper content features (knn.ts, issue 36). VOXD_VC_ENGINE picks one.
 */
import path from 'node:path';
import type { EngineEntry } from '../../../models/loaded.js';
import type { SpeakerEncoder } from '../../../speakers/embedding.js';
import type { VoiceConverter } from '../voice-converter.js';

export const conversionEngineChoices = ['world-dsp', 'knn'] as const;
export type ConversionEngineChoice = (typeof conversionEngineChoices)[number];

/** The knn engine's content encoder (catalog model) and its file. */
export const contentEncoderModel = { id: 'whisper-base-content', file: 'content-encoder.onnx' } as const;

/** `speakerEncoder`: world-dsp's speaker embeddings choose its envelope warp. */
export function conversionEngine(
  engine: ConversionEngineChoice,
  speakerEncoder: () => Promise<SpeakerEncoder>,
): EngineEntry<VoiceConverter> {
  if (engine === 'knn') {
    return {
      id: 'knn',
      operations: ['vc'],
      modelIds: [contentEncoderModel.id],
      load: async ({ dir, threads }) => {
        const [{ World, defaultWorldAddonPath }, { KnnConverter }, { ContentEncoder }] = await Promise.all([
          import('../../../audio/world.js'),
          import('./knn.js'),
          import('../content-encoder.js'),
        ]);
        const encoder = await ContentEncoder.load(path.join(dir(contentEncoderModel.id), contentEncoderModel.file), { threads });
        return new KnnConverter(World.load(defaultWorldAddonPath()), encoder, contentEncoderModel.id);
      },
      release: async (converter) => converter.close?.(),
    };
  }
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

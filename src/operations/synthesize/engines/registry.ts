/**
 * The speech engines, in order of preference: a language goes to the first engine that speaks it. Each loads from its
 * catalog models in its own module, imported when it loads (an API-only node never imports onnxruntime).
 */
import { catalog, piperModelPrefix, voiceQualities } from '../../../models/catalog/index.js';
import type { EngineEntry } from '../../../models/loaded.js';
import type { Synthesizer } from '../synthesizer.js';

export const synthesisEngines: ReadonlyArray<EngineEntry<Synthesizer>> = [
  {
    id: 'kokoro-82m',
    operations: ['tts'],
    modelIds: ['kokoro-82m', 'kokoro-voices', 'misaki-lexicon'],
    load: async ({ dir, threads }) =>
      (await import('./kokoro.js')).KokoroSynthesizer.load({
        modelDir: dir('kokoro-82m'),
        voicesDir: dir('kokoro-voices'),
        lexiconDir: dir('misaki-lexicon'),
        threads,
      }),
    release: async (engine) => engine.close(),
  },
  {
    id: 'piper',
    operations: ['tts'],
    // No voice is required: the installed ones are loaded (none installed: it speaks no language).
    modelIds: [],
    load: async ({ installedDir, threads }) => {
      // What is installed now: at load, and again when the engine looks for voices pulled since (refresh()).
      const discover = async () => {
        const voices: Array<{ key: string; dir: string }> = [];
        const pullable: Array<{ model: string; language: string; rank: number }> = [];
        for (const { id, voice } of catalog.filter((spec) => spec.id.startsWith(piperModelPrefix))) {
          // A damaged voice is left out (`voxd models verify` names it) rather than silencing every engine with it.
          const dir = await installedDir(id).catch(() => undefined);
          if (dir) voices.push({ key: id.slice(piperModelPrefix.length), dir });
          else if (voice) pullable.push({ model: id, language: voice.language, rank: voiceQualities.indexOf(voice.quality) });
        }
        // Best first: by quality, then in the catalog's order (a stable sort).
        pullable.sort((a, b) => b.rank - a.rank);
        return { voices, pullable: pullable.map(({ model, language }) => ({ model, language })) };
      };
      return (await import('./piper.js')).PiperSynthesizer.load({ ...(await discover()), threads, discover });
    },
    release: async (engine) => engine.close(),
  },
  {
    id: 'espeak-ng',
    operations: ['tts'],
    modelIds: [],
    load: async () => (await import('./espeak.js')).EspeakSynthesizer.load(),
    release: async (engine) => engine.close(),
  },
];

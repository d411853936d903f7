/**
 * Separation benchmark: SI-SDR and SI-SDR improvement per stem, the previous recipe (speech models only) against the
 * current one (with Spleeter), on every DnR-style mixture in eval/sep and on the generated mixtures
 * (./separation-mixtures.ts); the dialogue recipe's leave-one-out choice among candidates; real-time factor; peak RSS
 * on long inputs (built at run time by looping the eval mixtures) through the service's streaming path, each in a
 * fresh child process.
 * Run: node --import tsx bench/separation.ts [--quick: no recipe choice, no long inputs]
 * (VOXD_SHARED_DIR defaults to ../shared beside the checkout)
 * Writes bench/results/separation.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeFile } from '../src/audio/decode.js';
import { relativeErrorDb, siSdr } from './lib/sisdr.js';
import { loadConfig } from '../src/config.js';
import { catalog } from '../src/models/catalog/index.js';
import { ModelManager } from '../src/models/manager.js';
import type { Waveform } from '../src/audio/waveform.js';
import {
  defaultSoundtrackOptions,
  SoundtrackSeparator,
  type SoundtrackOptions,
  type SpleeterRecipe,
} from '../src/operations/separate/engines/soundtrack.js';
import { effectStems, generatedMixtures, musicPackage, speechToBackgroundDb, type GeneratedMixture } from './separation-mixtures.js';
import { separateWaveform, stemNames, type StemName } from '../src/operations/separate/separator.js';
import { writeStemFiles } from '../src/operations/separate/stem-files.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sharedDir = process.env.VOXD_SHARED_DIR ?? path.resolve(repoRoot, '../shared');
const evalDir = path.join(sharedDir, 'eval');
const { modelsDir } = loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent' });

/** The separator's models, pulled and verified through the model manager into the cache the service uses. */
async function loadSeparator(options: SoundtrackOptions = defaultSoundtrackOptions): Promise<SoundtrackSeparator> {
  const manager = new ModelManager({ modelsDir, localModelDirs: [path.join(sharedDir, 'models')], catalog });
  await Promise.all([manager.pull('deepfilternet3'), manager.pull('dtln'), manager.pull('spleeter-2stems')]);
  return SoundtrackSeparator.load(modelsDir, options);
}

/** The recipe before Spleeter (speech models only), the baseline of every comparison. */
const { spleeter: _spleeter, ...previousOptions } = defaultSoundtrackOptions;

/**
 * Dialogue recipes tried (the music part fixed at the default's): chosen by leave-one-out on eval/sep and checked on
 * the generated set. The geometric blend lets the speech models veto what Spleeter takes for voice in tonal music.
 */
const candidates: SpleeterRecipe[] = [
  ...(['linear', 'geometric'] as const).flatMap((combination) =>
    [0.7, 0.8, 0.9].map((vocalWeight) => ({ ...defaultSoundtrackOptions.spleeter!, combination, vocalWeight })),
  ),
  { ...defaultSoundtrackOptions.spleeter!, feedGain: 1 },
];

interface SepEntry {
  id: string;
  mixture: string;
  stems: Record<string, string>;
  notes?: string;
}

type ScoredStem = StemName | 'effects';

/**
 * Which eval stem is the reference for which output stem. DnR-style mixtures have speech / music / sfx stems; the
 * manifest describes dnr_mix02's sfx stem as a continuous ambience (whale song), so there it is the ambience reference.
 * "effects" scores sfx + ambience together against the sfx stem (DnR's effects stem holds both).
 */
const referenceMap: Record<string, Partial<Record<ScoredStem, string>>> = {
  dnr_mix01: { dialogue: 'speech', music: 'music', sfx: 'sfx', effects: 'sfx' },
  dnr_mix02: { dialogue: 'speech', music: 'music', ambience: 'sfx', effects: 'sfx' },
  dnr_mix03: { dialogue: 'speech', music: 'music', sfx: 'sfx', effects: 'sfx' },
};

/** A mixture with its reference per scored stem (none: a speech-only mixture). */
interface Item {
  id: string;
  mixture: Waveform;
  references: Partial<Record<ScoredStem, Float32Array>>;
}

type Scores = Partial<Record<ScoredStem, { si_sdr: number; si_sdri: number; mixture_si_sdr: number }>>;

const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;
const mean = (values: number[]): number => round(values.reduce((a, b) => a + b, 0) / values.length);

async function publicItems(): Promise<Item[]> {
  const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as { sep: SepEntry[] };
  return Promise.all(
    manifest.sep.map(async (entry) => {
      const references: Item['references'] = {};
      for (const [stem, refName] of Object.entries(referenceMap[entry.id] ?? {}))
        references[stem as ScoredStem] = (await decodeFile(path.join(evalDir, entry.stems[refName]!))).samples;
      return { id: entry.id, mixture: await decodeFile(path.join(evalDir, entry.mixture)), references };
    }),
  );
}

/** eval/sep effect stems: dnr_mix02's is an ambience, the others are events. */
function generatedItems(mixtures: GeneratedMixture[]): Item[] {
  return mixtures.map((m) => ({
    id: m.id,
    mixture: { samples: m.mixture, sampleRate: 44100, channels: 1 },
    references: {
      dialogue: m.speech,
      music: m.music,
      [m.effectsSource === effectStems[1] ? 'ambience' : 'sfx']: m.effects,
      effects: m.effects,
    },
  }));
}

async function separateAndScore(separator: SoundtrackSeparator, item: Item) {
  const { mixture } = item;
  const started = performance.now();
  const stems = await separateWaveform(separator, mixture);
  const elapsed = (performance.now() - started) / 1000;
  const seconds = mixture.samples.length / mixture.channels / mixture.sampleRate;
  const sum = new Float32Array(mixture.samples.length);
  for (const name of stemNames)
    stems[name].samples.forEach((v, i) => {
      sum[i]! += v;
    });
  const error = sum.map((v, i) => v - mixture.samples[i]!);
  const row: Record<string, unknown> = {
    seconds: round(seconds),
    rtf: round(elapsed / seconds, 3),
    sum_error_db: round(relativeErrorDb(error, mixture.samples), 1),
  };
  if (Object.keys(item.references).length > 0) {
    const scores: Scores = {};
    for (const [stem, reference] of Object.entries(item.references) as Array<[ScoredStem, Float32Array]>) {
      const estimate = stem === 'effects' ? stems.sfx.samples.map((v, i) => v + stems.ambience.samples[i]!) : stems[stem].samples;
      const base = siSdr(mixture.samples, reference);
      const score = siSdr(estimate, reference);
      scores[stem] = { si_sdr: round(score), si_sdri: round(score - base), mixture_si_sdr: round(base) };
    }
    row.scores = scores;
  } else {
    // Speech-only mixture (two talkers): everything is dialogue; report how much of it stays there.
    const background = mixture.samples.map((v, i) => v - stems.dialogue.samples[i]!);
    row.speech_only = {
      dialogue_si_sdr_vs_mixture: round(siSdr(stems.dialogue.samples, mixture.samples)),
      background_energy_db: round(relativeErrorDb(background, mixture.samples), 1),
    };
  }
  return { row, seconds, elapsed, scores: row.scores as Scores | undefined };
}

/** Every item through the separator: rows, mean SI-SDRi per stem, RTF over all. */
async function evaluate(options: SoundtrackOptions, items: Item[], label: string) {
  const separator = await loadSeparator(options);
  try {
    const rows: Array<{ id: string; scores?: Scores } & Record<string, unknown>> = [];
    let audioSeconds = 0;
    let processingSeconds = 0;
    for (const item of items) {
      const { row, seconds, elapsed, scores } = await separateAndScore(separator, item);
      audioSeconds += seconds;
      processingSeconds += elapsed;
      rows.push({ id: item.id, ...row, ...(scores ? { scores } : {}) });
      console.log(label, item.id, JSON.stringify(scores ?? row.speech_only));
    }
    return { model: separator.modelId, rows, averages: averages(rows), rtf: round(processingSeconds / audioSeconds, 3) };
  } finally {
    await separator.close();
  }
}

function averages(rows: Array<{ scores?: Scores }>): Partial<Record<ScoredStem, { si_sdri: number; mixtures: number }>> {
  const out: Partial<Record<ScoredStem, { si_sdri: number; mixtures: number }>> = {};
  for (const stem of [...stemNames, 'effects'] as ScoredStem[]) {
    const values = rows.flatMap((r) => (r.scores?.[stem] ? [r.scores[stem].si_sdri] : []));
    if (values.length > 0) out[stem] = { si_sdri: mean(values), mixtures: values.length };
  }
  return out;
}

/** Old and new side by side per mixture. */
function comparison(previous: Awaited<ReturnType<typeof evaluate>>, current: Awaited<ReturnType<typeof evaluate>>) {
  return {
    mixtures: current.rows.map((row, i) => ({ ...row, previous: previous.rows[i]!.scores ?? previous.rows[i]!.speech_only })),
    averages: { previous: previous.averages, new: current.averages },
    rtf: { previous: previous.rtf, new: current.rtf },
  };
}

/**
 * For each eval/sep mixture: the candidate with the best mean dialogue SI-SDRi on the other two, scored on it; and
 * each candidate's means on eval/sep and on the generated set.
 */
async function chooseRecipe(publicScored: Item[], generated: Item[]) {
  const results: Array<{ recipe: SpleeterRecipe; dialogue: number[]; generated_dialogue_si_sdri: number }> = [];
  for (const recipe of candidates) {
    const options = { ...defaultSoundtrackOptions, spleeter: recipe };
    const onPublic = await evaluate(options, publicScored, `candidate ${JSON.stringify(recipe)}`);
    const onGenerated = await evaluate(options, generated, `candidate ${JSON.stringify(recipe)}`);
    results.push({
      recipe,
      dialogue: onPublic.rows.map((r) => r.scores!.dialogue!.si_sdri),
      generated_dialogue_si_sdri: onGenerated.averages.dialogue!.si_sdri,
    });
  }
  const leaveOneOut = publicScored.map((item, heldOut) => {
    const others = (dialogue: number[]): number => mean(dialogue.filter((_, i) => i !== heldOut));
    const best = results.reduce((a, b) => (others(b.dialogue) > others(a.dialogue) ? b : a));
    return {
      held_out: item.id,
      chosen: best.recipe,
      chosen_on_others_si_sdri: others(best.dialogue),
      held_out_dialogue_si_sdri: best.dialogue[heldOut]!,
    };
  });
  return {
    candidates: results.map((r) => ({
      recipe: r.recipe,
      public_dialogue_si_sdri: Object.fromEntries(publicScored.map((item, i) => [item.id, r.dialogue[i]])),
      public_mean: mean(r.dialogue),
      generated_mean: r.generated_dialogue_si_sdri,
    })),
    leave_one_out: { rows: leaveOneOut, mean_held_out_dialogue_si_sdri: mean(leaveOneOut.map((r) => r.held_out_dialogue_si_sdri)) },
  };
}

/**
 * Child mode: the service's path (file decoded in blocks -> separator -> raw stems on disk -> encoded wav) on a
 * `minutes`-long 44.1 kHz mono file built by looping the eval mixtures; prints peak RSS.
 */
async function rssChild(minutes: number): Promise<void> {
  const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as { sep: SepEntry[] };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'voxd-sep-bench-'));
  try {
    const list = path.join(dir, 'list.txt');
    writeFileSync(
      list,
      manifest.sep
        .filter((e) => referenceMap[e.id])
        .map((e) => `file '${path.join(evalDir, e.mixture)}'\n`)
        .join(''),
    );
    const input = path.join(dir, 'long.wav');
    const built = spawnSync('ffmpeg', [
      '-v',
      'error',
      '-stream_loop',
      '-1',
      '-f',
      'concat',
      '-safe',
      '0',
      '-i',
      list,
      '-t',
      String(minutes * 60),
      '-ar',
      '44100',
      '-ac',
      '1',
      '-c:a',
      'pcm_s16le',
      input,
    ]);
    if (built.status !== 0) throw new Error(`building the long input failed: ${built.stderr.toString()}`);
    const separator = await loadSeparator();
    const started = performance.now();
    const result = await writeStemFiles({
      separator,
      inputPath: input,
      layout: { sampleRate: 44100, channels: 1 },
      stems: [...stemNames],
      format: 'wav',
      extension: 'wav',
      sampleRate: 44100,
      dir,
      maxSeconds: Infinity,
    });
    const elapsed = (performance.now() - started) / 1000;
    const peakRssBytes = process.resourceUsage().maxRSS * 1024;
    console.log(
      JSON.stringify({
        minutes,
        seconds: round(result.durationSeconds, 1),
        rtf: round(elapsed / result.durationSeconds, 3),
        peak_rss_mb: Math.round(peakRssBytes / 2 ** 20),
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** As `npm start` and the README's worker commands run the service: glibc's malloc arenas, one per thread that allocates
 * at once, held 250 MB of freed memory at 5 minutes with the default (1499 MB peak against 1245). */
const mallocArenaMax = process.env.MALLOC_ARENA_MAX ?? '2';

function runRssChild(minutes: number): Record<string, number> {
  const child = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--rss-minutes', String(minutes)], {
    encoding: 'utf8',
    env: { ...process.env, MALLOC_ARENA_MAX: mallocArenaMax },
    maxBuffer: 1 << 24,
  });
  const line = child.stdout.trim().split('\n').pop() ?? '';
  if (child.status !== 0) throw new Error(`RSS run (${minutes} min) failed: ${child.stderr}`);
  return JSON.parse(line) as Record<string, number>;
}

async function main(): Promise<void> {
  const rssArg = process.argv.indexOf('--rss-minutes');
  if (rssArg >= 0) return rssChild(Number(process.argv[rssArg + 1]));
  const items = await publicItems();
  const { mixtures, tracks } = await generatedMixtures(
    evalDir,
    path.join(modelsDir, '.downloads'),
    path.join(modelsDir, 'spleeter-2stems'),
  );
  const generated = generatedItems(mixtures);
  const current = await evaluate(defaultSoundtrackOptions, items, 'new');
  const publicResult = comparison(await evaluate(previousOptions, items, 'previous'), current);
  const generatedResult = comparison(
    await evaluate(previousOptions, generated, 'previous'),
    await evaluate(defaultSoundtrackOptions, generated, 'new'),
  );
  const recipe = process.argv.includes('--quick')
    ? undefined
    : await chooseRecipe(
        items.filter((item) => Object.keys(item.references).length > 0),
        generated,
      );
  const memory = process.argv.includes('--quick') ? [] : [5, 20].map((minutes) => runRssChild(minutes));
  const report = {
    engine: 'soundtrack',
    model: current.model,
    recipe: defaultSoundtrackOptions.spleeter,
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', node: process.version },
    targets: {
      dialogue_si_sdri_db: 7,
      generated_dialogue_si_sdri_db: 8,
      music_si_sdri_db: 6,
      sfx_si_sdri_db: 3,
      ambience_si_sdri_db: 0,
      rtf: 0.25,
      peak_rss_mb: 1536,
    },
    eval_sep: publicResult,
    generated: {
      built_by: 'bench/separation-mixtures.ts',
      music: { package: musicPackage, vocal_check: tracks },
      speech_to_background_db: speechToBackgroundDb,
      ...generatedResult,
    },
    ...(recipe ? { recipe_choice: recipe } : {}),
    memory: memory.map((row) => ({ ...row, malloc_arena_max: Number(mallocArenaMax) })),
    created_at: new Date().toISOString(),
  };
  mkdirSync(path.join(repoRoot, 'bench/results'), { recursive: true });
  writeFileSync(path.join(repoRoot, 'bench/results/separation.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(
    JSON.stringify(
      {
        eval_sep: publicResult.averages,
        generated: generatedResult.averages,
        rtf: publicResult.rtf,
        leave_one_out: recipe?.leave_one_out,
        memory,
      },
      null,
      1,
    ),
  );
}

await main();

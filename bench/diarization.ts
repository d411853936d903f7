/**
 * Diarization benchmark (overlap-aware: segmentation-3.0 + CAM++): DER (collar 0.25 s, UEM) per file on the eval
 * diarization files and on conversations generated here from the clean single-speaker clips of eval/vc and eval/asr
 * (two and three speakers, with pauses and overlaps; seeded, so the audio and its exact RTTM are the same every run and
 * nothing is committed but this script). The new-speaker distance threshold is reported leave-one-out: each file is
 * scored with the threshold that is best on all the other files. CPU seconds per audio second of the diarizer alone.
 * Adds a `diarization_v2` section to bench/results/transcription.json (the rest of the file is kept).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { catalog } from '../src/models/catalog/index.js';
import { ModelManager } from '../src/models/manager.js';
import { DiarizationModels, OverlapDiarizer, overlapDistanceThreshold } from '../src/speakers/overlap-diarization.js';
import { packageRoot } from '../src/core/version.js';
import { evalRecordings, generatedConversations, type DiarizedRecording } from './lib/conversations.js';
import { diarizationErrorRate } from './lib/der.js';

const evalDir = path.resolve(process.env.VOXD_SHARED_DIR ?? path.join(packageRoot, '..', 'shared'), 'eval');
const resultsPath = path.join(packageRoot, 'bench', 'results', 'transcription.json');
const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  asr: Array<{ id: string; audio: string; speaker: string; duration_s: number }>;
  vc: Array<{ id: string; audio: string; speaker: string; duration_s: number }>;
  diar: Array<{ id: string; audio: string; rttm: string; uem?: string; num_speakers: number; duration_s: number }>;
};
const config = loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent' });
const models = new ModelManager({ modelsDir: config.modelsDir, localModelDirs: config.localModelDirs, catalog });
const [segmentationDir, camppDir] = await Promise.all([models.pull('pyannote-segmentation-3'), models.pull('campplus')]);
const diarizationModels = await DiarizationModels.load(
  { segmentation: path.join(segmentationDir, 'segmentation-3.0.onnx'), campplus: path.join(camppDir, 'campplus.onnx') },
  { threads: 1 },
);
const round = (v: number, digits = 4): number => Math.round(v * 10 ** digits) / 10 ** digits;
const sampleRate = 16000;

const thresholds = [0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7];
const files: DiarizedRecording[] = [...(await evalRecordings(evalDir, manifest)), ...(await generatedConversations(evalDir, manifest))];
const rows: Array<{
  id: string;
  seconds: number;
  cpuSeconds: number;
  der: Map<number, number>;
  derGivenCount: number;
  speakersFound: Map<number, number>;
  speakers: number;
  overlapSeconds: number;
}> = [];
for (const file of files) {
  const diarizer = new OverlapDiarizer(diarizationModels);
  const cpuBefore = process.cpuUsage();
  const blockSamples = sampleRate * 10;
  for (let i = 0; i < file.samples.length; i += blockSamples) await diarizer.addAudio(file.samples.subarray(i, i + blockSamples));
  const first = await diarizer.finish();
  const cpu = process.cpuUsage(cpuBefore);
  const seconds = file.samples.length / sampleRate;
  const scoring = { collarSeconds: 0.25, durationSeconds: seconds, ...(file.uem ? { uem: file.uem } : {}) };
  const der = new Map<number, number>();
  const speakersFound = new Map<number, number>();
  for (const threshold of thresholds) {
    const turns = threshold === overlapDistanceThreshold ? first : await diarizer.finish({ distanceThreshold: threshold });
    der.set(threshold, diarizationErrorRate(file.reference, turns, scoring).der);
    speakersFound.set(threshold, new Set(turns.map((t) => t.speaker)).size);
  }
  const given = await diarizer.finish({ numSpeakers: file.speakers });
  const overlapSeconds = overlapOf(first);
  rows.push({
    id: file.id,
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    der,
    derGivenCount: diarizationErrorRate(file.reference, given, scoring).der,
    speakersFound,
    speakers: file.speakers,
    overlapSeconds,
  });
  process.stdout.write(
    `${file.id} ${thresholds.map((t) => `${t}:${round(der.get(t)! * 100, 1)}`).join(' ')} given-count:${round(diarizationErrorRate(file.reference, given, scoring).der * 100, 1)} speakers=${speakersFound.get(overlapDistanceThreshold)}/${file.speakers} cpu/s=${round((cpu.user + cpu.system) / 1e6 / seconds, 3)}\n`,
  );
}

/** Seconds where at least two turns are active. */
function overlapOf(turns: Array<{ startSeconds: number; endSeconds: number }>): number {
  const edges = turns
    .flatMap(
      (t) =>
        [
          [t.startSeconds, 1],
          [t.endSeconds, -1],
        ] as const,
    )
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let active = 0;
  let last = 0;
  let total = 0;
  for (const [time, step] of edges) {
    if (active >= 2) total += time - last;
    active += step;
    last = time;
  }
  return total;
}

const isAmi = (id: string): boolean => /pyannote\/(dev|tst)/.test(id);
const isGenerated = (id: string): boolean => id.startsWith('generated/');

/** A long recording (the generated conversations one after another, 20 min): memory after each 5 min, CPU per second. */
async function longRecording(minutes: number) {
  const generated = files.filter((f) => isGenerated(f.id));
  const diarizer = new OverlapDiarizer(diarizationModels);
  const rssMb: number[] = [];
  const cpuBefore = process.cpuUsage();
  let fed = 0;
  for (let i = 0; fed < minutes * 60 * sampleRate; i++) {
    const file = generated[i % generated.length]!;
    for (let at = 0; at < file.samples.length; at += 10 * sampleRate) {
      const block = file.samples.subarray(at, at + 10 * sampleRate);
      await diarizer.addAudio(block);
      if (Math.floor((fed + block.length) / (300 * sampleRate)) > Math.floor(fed / (300 * sampleRate)))
        rssMb.push(Math.round(process.memoryUsage().rss / 2 ** 20));
      fed += block.length;
    }
  }
  const turns = await diarizer.finish();
  const cpu = process.cpuUsage(cpuBefore);
  rssMb.push(Math.round(process.memoryUsage().rss / 2 ** 20));
  return {
    minutes: round(fed / sampleRate / 60, 1),
    rss_mb_every_5_min: rssMb,
    cpu_seconds_per_audio_second: round((cpu.user + cpu.system) / 1e6 / (fed / sampleRate), 3),
    speakers_found: new Set(turns.map((t) => t.speaker)).size,
  };
}
const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / Math.max(values.length, 1);
/** Leave-one-out: the threshold best on the other files (mean DER; among equal bests, the middle one, upper of two). */
const heldOut = rows.map((row) => {
  const others = rows.filter((r) => r !== row);
  const scores = thresholds.map((t) => mean(others.map((r) => r.der.get(t)!)));
  const lowest = Math.min(...scores);
  const tied = thresholds.filter((_, i) => scores[i]! - lowest < 1e-9);
  const best = tied[Math.floor(tied.length / 2)]!;
  return { id: row.id, threshold: best, der: row.der.get(best)! };
});
// The whole transcription pipeline's DER of the same file at the transcription bench's last run (its `diarization`
// section): a cross-check, or the diarizer's previous state when that run is older than this change.
const inTranscriptionBench = new Map(
  ((JSON.parse(readFileSync(resultsPath, 'utf8')) as { diarization?: Array<{ id: string; der: number }> }).diarization ?? []).map((r) => [
    r.id,
    r.der,
  ]),
);
const perFile = rows.map((row, i) => ({
  id: row.id,
  speakers_true: row.speakers,
  speakers_found: row.speakersFound.get(overlapDistanceThreshold),
  ...(inTranscriptionBench.has(row.id) ? { der_transcription_bench: inTranscriptionBench.get(row.id) } : {}),
  der: round(row.der.get(overlapDistanceThreshold)!),
  der_held_out: round(heldOut[i]!.der),
  held_out_threshold: heldOut[i]!.threshold,
  der_true_speaker_count: round(row.derGivenCount),
  overlap_seconds_found: round(row.overlapSeconds, 2),
  cpu_seconds_per_audio_second: round(row.cpuSeconds / row.seconds, 3),
}));
const summary = {
  pipeline:
    'segmentation-3.0 (10 s windows, 1 s step, powerset speaker count) + CAM++ 1.5 s windows pooled from one network pass per chunk, average-linkage clustering',
  distance_threshold: overlapDistanceThreshold,
  thresholds_tried: thresholds,
  collar_seconds: 0.25,
  measured_at: new Date().toISOString(),
  ami_mean_der_transcription_bench: round(mean(perFile.filter((r) => isAmi(r.id)).map((r) => r.der_transcription_bench ?? 0))),
  ami_mean_der: round(mean(perFile.filter((r) => isAmi(r.id)).map((r) => r.der))),
  ami_mean_der_held_out: round(mean(perFile.filter((r) => isAmi(r.id)).map((r) => r.der_held_out))),
  generated_mean_der: round(mean(perFile.filter((r) => isGenerated(r.id)).map((r) => r.der))),
  generated_mean_der_held_out: round(mean(perFile.filter((r) => isGenerated(r.id)).map((r) => r.der_held_out))),
  cpu_seconds_per_audio_second: round(rows.reduce((s, r) => s + r.cpuSeconds, 0) / rows.reduce((s, r) => s + r.seconds, 0), 3),
  long_recording: await longRecording(20),
  files: perFile,
};
const results = JSON.parse(readFileSync(resultsPath, 'utf8')) as Record<string, unknown>;
results.diarization_v2 = summary;
writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write(`${JSON.stringify({ ...summary, files: undefined }, null, 2)}\n`);
await diarizationModels.close();

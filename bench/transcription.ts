/**
 * Transcription benchmark: WER/CER per language (given language and auto), language detection, DER (collar 0.25 s,
 * UEM) on the diarization files, RTF, peak RSS on a long file made from the eval audio, and WER on long English files with
 * and without repeated content.
 * Writes bench/results/transcription.json. Env: BENCH_LONG_MINUTES (comma list, default 10,60; 0 skips them and keeps the
 * previous run's long-file rows, each dated), VOXD_ASR_MODEL. `--long-wer` measures only the long-file WER rows and
 * replaces them in the results file.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { transcribeFile } from '../src/operations/transcribe/pipeline.js';
import { DiarizationModels, OverlapDiarizer } from '../src/speakers/overlap-diarization.js';
import { packageRoot } from '../src/core/version.js';
import { diarizationErrorRate, parseRttm, parseUem } from './lib/der.js';
import { errorRate } from './lib/wer.js';

const evalDir = path.resolve(process.env.VOXD_SHARED_DIR ?? path.join(packageRoot, '..', 'shared'), 'eval');
const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  asr: Array<{ id: string; audio: string; language: string; transcript: string; duration_s: number }>;
  diar: Array<{ id: string; audio: string; rttm: string; uem?: string; num_speakers: number; duration_s: number }>;
};

const config = loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent', VOXD_DATA_DIR: path.join(tmpdir(), 'voxd-bench') });
const container = await createContainer(config);
const round = (v: number, digits = 4): number => Math.round(v * 10 ** digits) / 10 ** digits;

let diarizationModels: Promise<DiarizationModels> | undefined;
const loadDiarizationModels = async (): Promise<DiarizationModels> => {
  const [segmentation, campplus] = await Promise.all([
    container.models.require('pyannote-segmentation-3'),
    container.models.require('campplus'),
  ]);
  return DiarizationModels.load(
    { segmentation: path.join(segmentation, 'segmentation-3.0.onnx'), campplus: path.join(campplus, 'campplus.onnx') },
    { threads: config.inferenceThreads },
  );
};

async function run(file: string, language: string, diarize?: { numSpeakers?: number }) {
  const [transcriber, vad] = await Promise.all([container.asr.get(), container.vad.get()]);
  const diarizer = diarize ? new OverlapDiarizer(await (diarizationModels ??= loadDiarizationModels())) : undefined;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const transcript = await transcribeFile(
    { transcriber, vad },
    { path: file, language, speakers: diarize ?? {}, maxAudioSeconds: 86400, ...(diarizer ? { diarizer } : {}) },
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return { transcript, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, turns: (await diarizer?.finish(diarize)) ?? [] };
}

/** Peak RSS of a child process transcribing a long file (the child runs this script with --long). */
async function longFile(minutes: number): Promise<Record<string, number>> {
  const list = path.join(tmpdir(), 'voxd-bench-long.txt');
  const target = path.join(tmpdir(), `voxd-bench-${minutes}min.wav`);
  const sources = [...manifest.asr.map((e) => e.audio), ...manifest.diar.map((e) => e.audio)].map((a) => path.join(evalDir, a));
  const total = [...manifest.asr, ...manifest.diar].reduce((s, e) => s + e.duration_s, 0);
  const repeats = Math.ceil((minutes * 60) / total);
  writeFileSync(list, Array.from({ length: repeats }, () => sources.map((s) => `file '${s}'`).join('\n')).join('\n'));
  execFileSync('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'concat',
    '-safe',
    '0',
    '-i',
    list,
    '-ac',
    '1',
    '-ar',
    '16000',
    '-t',
    String(minutes * 60),
    target,
  ]);
  const child = spawnSync(process.execPath, ['--import', 'tsx', path.join(packageRoot, 'bench/transcription.ts'), '--long', target], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  if (child.status !== 0) throw new Error(child.stderr);
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Record<string, number>;
}

/**
 * Long English files with known transcripts: the eval's six English utterances repeated to 3 minutes, two of them
 * (arctic_a0024, the horizon) repeated to 3 minutes (speech that repeats itself), and the six once plus the pyannote
 * telephone sample (nothing repeated). Each utterance is followed by 0.5 s of silence.
 */
async function longFileWer(): Promise<Array<Record<string, unknown>>> {
  const english = manifest.asr
    .filter((e) => e.language === 'en')
    .map((e) => ({ audio: path.join(evalDir, e.audio), transcript: e.transcript, seconds: e.duration_s }));
  const stm = readFileSync(path.join(evalDir, 'diar/pyannote/sample.stm'), 'utf8').trim().split('\n');
  const telephone = {
    audio: path.join(evalDir, 'diar/pyannote/sample.wav'),
    transcript: stm.map((line) => line.split(/\s+/).slice(5).join(' ')).join(' '),
    seconds: 30,
  };
  const roundSeconds = english.reduce((sum, e) => sum + e.seconds + 0.5, 0);
  const pair = english.filter((e) => /arctic_a0024|stereo_diarization_right/.test(e.audio));
  const pairSeconds = pair.reduce((sum, e) => sum + e.seconds + 0.5, 0);
  const files = [
    { content: 'repeated', parts: Array.from({ length: Math.ceil(180 / roundSeconds) }, () => english).flat() },
    { content: 'two sentences repeated', parts: Array.from({ length: Math.ceil(180 / pairSeconds) }, () => pair).flat() },
    { content: 'not repeated', parts: [...english, telephone] },
  ];
  const rows = [];
  for (const { content, parts } of files) {
    const target = path.join(tmpdir(), `voxd-bench-wer-${content.replace(' ', '-')}.wav`);
    const inputs = parts.flatMap((p) => ['-i', p.audio]);
    const padded = parts.map((_, i) => `[${i}:a]aformat=sample_rates=16000:channel_layouts=mono,apad=pad_dur=0.5[a${i}]`).join(';');
    const filter = `${padded};${parts.map((_, i) => `[a${i}]`).join('')}concat=n=${parts.length}:v=0:a=1[out]`;
    execFileSync('ffmpeg', ['-v', 'error', '-y', ...inputs, '-filter_complex', filter, '-map', '[out]', target]);
    const { transcript, seconds, cpuSeconds } = await run(target, 'en');
    const rate = errorRate(parts.map((p) => p.transcript).join(' '), transcript.text, 'en');
    rows.push({
      content,
      measured_at: new Date().toISOString(),
      audio_seconds: round(transcript.duration, 1),
      wer: round(rate.rate),
      errors: rate.errors,
      reference_words: rate.referenceLength,
      words: transcript.text.split(/\s+/).length,
      cpu_seconds: round(cpuSeconds, 1),
      elapsed_seconds: round(seconds, 1),
      warnings: transcript.warnings,
    });
    process.stdout.write(`long-file WER, ${content}: ${JSON.stringify(rows.at(-1))}\n`);
  }
  return rows;
}

const resultsPath = path.join(packageRoot, 'bench/results/transcription.json');
if (process.argv[2] === '--long-wer') {
  const previous = JSON.parse(readFileSync(resultsPath, 'utf8')) as Record<string, unknown>;
  writeFileSync(resultsPath, `${JSON.stringify({ ...previous, long_file_wer: await longFileWer() }, null, 2)}\n`);
  await container.close();
  process.exit(0);
}

if (process.argv[2] === '--long') {
  const { transcript, seconds, cpuSeconds } = await run(process.argv[3]!, 'en');
  process.stdout.write(
    `${JSON.stringify({ audio_seconds: transcript.duration, elapsed_seconds: round(seconds, 1), rtf: round(seconds / transcript.duration), cpu_seconds_per_audio_second: round(cpuSeconds / transcript.duration), load_average_1min: round(loadavg()[0]!, 2), peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024), words: transcript.segments.reduce((n, s) => n + s.words.length, 0) })}\n`,
  );
  await container.close();
  process.exit(0);
}

interface UtteranceRow {
  id: string;
  language: string;
  metric: 'wer' | 'cer';
  error_given: number;
  error_auto: number;
  detected: string;
  rtf: number;
  hypothesis: string;
  errors: { given: number; auto: number; referenceLength: number };
}

const asr: UtteranceRow[] = [];
let audioSeconds = 0;
let elapsedSeconds = 0;
let cpuSeconds = 0;
for (const entry of manifest.asr) {
  const file = path.join(evalDir, entry.audio);
  const given = await run(file, entry.language);
  const auto = await run(file, 'auto');
  audioSeconds += entry.duration_s * 2;
  elapsedSeconds += given.seconds + auto.seconds;
  cpuSeconds += given.cpuSeconds + auto.cpuSeconds;
  const givenRate = errorRate(entry.transcript, given.transcript.text, entry.language);
  const autoRate = errorRate(entry.transcript, auto.transcript.text, entry.language);
  const row: UtteranceRow = {
    id: entry.id,
    language: entry.language,
    metric: ['zh', 'ja', 'ko'].includes(entry.language) ? 'cer' : 'wer',
    error_given: round(givenRate.rate),
    error_auto: round(autoRate.rate),
    detected: auto.transcript.language,
    rtf: round(given.seconds / entry.duration_s),
    hypothesis: given.transcript.text,
    errors: { given: givenRate.errors, auto: autoRate.errors, referenceLength: givenRate.referenceLength },
  };
  asr.push(row);
  process.stdout.write(
    `${row.id} ${row.language} ${row.metric}=${row.error_given} auto=${row.error_auto} detected=${row.detected} rtf=${row.rtf}\n`,
  );
}

/** Pooled error rate per language: errors over reference length across its utterances. */
const perLanguage: Record<string, { metric: string; given: number; auto: number; utterances: number }> = {};
for (const language of [...new Set(asr.map((r) => r.language))]) {
  const rows = asr.filter((r) => r.language === language);
  const length = rows.reduce((n, r) => n + r.errors.referenceLength, 0);
  const pooled = (field: 'given' | 'auto'): number => round(rows.reduce((n, r) => n + r.errors[field], 0) / Math.max(length, 1));
  perLanguage[language] = { metric: rows[0]!.metric, given: pooled('given'), auto: pooled('auto'), utterances: rows.length };
}

const diarization = [];
for (const entry of manifest.diar) {
  const reference = parseRttm(readFileSync(path.join(evalDir, entry.rttm), 'utf8'));
  const uem = entry.uem ? parseUem(readFileSync(path.join(evalDir, entry.uem), 'utf8')) : undefined;
  const free = await run(path.join(evalDir, entry.audio), 'en', {});
  const scoring = { collarSeconds: 0.25, durationSeconds: entry.duration_s, ...(uem ? { uem } : {}) };
  // Diarization proper: the speaker turns of the request's diarizer.
  const der = diarizationErrorRate(reference, free.turns, scoring);
  // Speaker-attributed transcript: turns rebuilt from the words' speakers and times (also counts ASR's missed words).
  const words = free.transcript.segments.flatMap((s) =>
    s.words.map((w) => ({ speaker: w.speaker ?? '?', startSeconds: w.start, endSeconds: w.end })),
  );
  const wordDer = diarizationErrorRate(reference, turnsFromWords(words), scoring);
  diarization.push({
    id: entry.id,
    speakers_true: entry.num_speakers,
    speakers_found: free.transcript.speakers.length,
    der: round(der.der),
    miss_seconds: round(der.missSeconds, 2),
    false_alarm_seconds: round(der.falseAlarmSeconds, 2),
    confusion_seconds: round(der.confusionSeconds, 2),
    word_der: round(wordDer.der),
  });
  process.stdout.write(
    `${entry.id} DER=${round(der.der)} word DER=${round(wordDer.der)} speakers=${free.transcript.speakers.length}/${entry.num_speakers}\n`,
  );
}

/** Word-level speaker labels -> turns (consecutive words of one speaker joined across gaps under 0.5 s). */
function turnsFromWords(words: Array<{ speaker: string; startSeconds: number; endSeconds: number }>) {
  const turns: typeof words = [];
  for (const w of words) {
    const last = turns.at(-1);
    if (last && last.speaker === w.speaker && w.startSeconds - last.endSeconds < 0.5) last.endSeconds = w.endSeconds;
    else turns.push({ ...w });
  }
  return turns;
}

// Two lengths, so "flat in duration" is measured rather than assumed.
const longMinutes = (process.env.BENCH_LONG_MINUTES ?? '10,60')
  .split(',')
  .map(Number)
  .filter((m) => m > 0);
const long: unknown[] =
  longMinutes.length > 0 || !existsSync(resultsPath)
    ? []
    : ((JSON.parse(readFileSync(resultsPath, 'utf8')) as { long_files?: unknown[] }).long_files ?? []);
for (const minutes of longMinutes) long.push({ minutes, measured_at: new Date().toISOString(), ...(await longFile(minutes)) });
const detected = asr.filter((r) => r.detected === r.language).length;
const results = {
  model: config.asrModel,
  engine: 'whisper.cpp',
  threads: config.inferenceThreads,
  measured_at: new Date().toISOString(),
  per_language: perLanguage,
  language_detection_accuracy: round(detected / asr.length),
  rtf_short_clips: round(elapsedSeconds / audioSeconds),
  // Wall-clock RTF depends on what else runs on the machine; CPU seconds per audio second much less.
  cpu_seconds_per_audio_second_short_clips: round(cpuSeconds / audioSeconds),
  load_average_1min: round(loadavg()[0]!, 2),
  diarization,
  long_files: long,
  long_file_wer: await longFileWer(),
  utterances: asr,
};
// Other benches add their own sections to the file (diarization_v2, speaker_identification, side_by_side): kept.
const previousSections = existsSync(resultsPath) ? (JSON.parse(readFileSync(resultsPath, 'utf8')) as Record<string, unknown>) : {};
writeFileSync(resultsPath, `${JSON.stringify({ ...previousSections, ...results }, null, 2)}\n`);
process.stdout.write(
  `${JSON.stringify({ per_language: perLanguage, language_detection_accuracy: results.language_detection_accuracy, rtf_short_clips: results.rtf_short_clips, cpu_seconds_per_audio_second_short_clips: results.cpu_seconds_per_audio_second_short_clips, long_files: long }, null, 2)}\n`,
);
await container.close();

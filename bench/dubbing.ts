/**
 * Dubbing (POST /v1/dubbing, issue 40) on the film-style clips of ./dubbing-clips.ts, through the real server process:
 * each clip's mixture is posted (target_language=en: translated into English, the English clips re-voiced in English;
 * voices cloned with consent; format wav, so no codec delay shifts the comparisons), the job awaited, the dubbed audio and
 * the dubbed dialogue alone downloaded. Per clip, held-out clips first:
 * - onsets: each clip line paired with the dubbed line starting closest to it (bench/lib/dubbing-metrics.ts); the error of
 *   the dubbed start (median, worst), lines left unpaired, and how far a dubbed line runs into the next line of another
 *   speaker (the clips with a 0.12 s follow-up test it); also the service's detected source start, to tell detection
 *   from placement;
 * - intelligibility: the service's own transcription (POST /v1/audio/transcribe, language en) of the dubbed dialogue
 *   against the English text of the dub's lines (WER, pooled over the part);
 * - background kept: SI-SDR of (dub - dubbed dialogue) against the clip's music + sfx + ambience; the original dialogue
 *   left in it (dB relative to its level in the clip);
 * - speakers (CAM++, which the service also clones with): each dubbed line of at least 1 s against each clip speaker's
 *   own lines (from the clean dialogue stem), and against every built-in English voice (a fixed sentence through
 *   POST /v1/audio/tts); share of lines closest to their own speaker, and closer to it than to every built-in voice;
 * - time: the job's run time (started -> finished) per second of input, and per minute of input.
 * The first job also loads the models a dub needs beyond those preloaded: its time is reported as it is.
 * Targets (issue 40) are in the results file. Writes bench/results/dubbing.json (`--out` elsewhere), keeping the clips
 * an earlier run measured there and this one did not.
 *
 * Run: npm run build && VOXD_SHARED_DIR=/work/shared node --import tsx bench/dubbing.ts [--clips id,id] [--part held-out]
 *      [--num-speakers] [--clips-only]
 *   --num-speakers: pass each clip's speaker count (default: the service finds it).
 *   --clips-only: write the clips (tmp dir) and stop.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { decodeFile } from '../src/audio/decode.js';
import { concatSamples } from '../src/audio/waveform.js';
import { packageRoot } from '../src/core/version.js';
import { CamppEncoder, camppSampleRate } from '../src/speakers/campplus.js';
import type { DubbedLine } from '../src/operations/dub/service.js';
import { evalDir, makeTempDir } from '../test/helpers/app.js';
import { Api, type Job } from '../test/helpers/jobs.js';
import { camppModelPath } from '../test/helpers/models.js';
import { startServer, testKey, waitUntilReady } from '../test/helpers/server.js';
import { type DubbingClip, dubbingClips, writeDubbingClips } from './dubbing-clips.js';
import { backgroundSiSdr, dialogueLeakDb, lineSimilarities, matchLines, residual } from './lib/dubbing-metrics.js';
import { median, round } from './lib/reference-word-times.js';
import { errorRate } from './lib/wer.js';

const { values: args } = parseArgs({
  options: {
    clips: { type: 'string' },
    part: { type: 'string' },
    'num-speakers': { type: 'boolean', default: false },
    'clips-only': { type: 'boolean', default: false },
    out: { type: 'string', default: path.join(packageRoot, 'bench/results/dubbing.json') },
  },
});

const targets = {
  median_onset_error_seconds: '<= 0.2',
  intelligibility_wer: '<= 0.10',
  background_si_sdr_db: '>= 10',
  lines_closest_to_own_speaker: '>= 0.90',
  rtf: '< 3 (under 3x real time on this machine)',
};
/** Lines shorter than this are not embedded (too little speech for a speaker embedding). */
const minEmbedSeconds = 1;
const builtinSentence = 'The evening train was late again, so we walked home along the river and talked about the summer.';

interface ResultFile {
  url: string;
}
interface DubResult {
  source_language: string;
  target_language: string;
  files: { audio: ResultFile; dialogue: ResultFile };
  voices: Array<{ speaker: string; voice_id: string; cloned: boolean; temporary: boolean }>;
  lines: DubbedLine[];
  warnings: string[];
}

const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as Parameters<typeof dubbingClips>[1];
const allClips = await dubbingClips(evalDir, manifest);
const clipsDir = path.join(tmpdir(), 'voxd-dubbing-clips');
const written = await writeDubbingClips(allClips, clipsDir);
if (args['clips-only']) {
  for (const clip of allClips)
    process.stdout.write(
      `${clip.id} (${clip.part}): ${(clip.mixture.length / clip.sampleRate).toFixed(1)} s, ${clip.lines.length} lines, ${clip.speakers.length} speakers, ${clip.languages.join('/')} -> ${written[clip.id]}\n`,
    );
  process.exit(0);
}
const wanted = args.clips?.split(',');
const chosen = allClips
  .filter((c) => (!wanted || wanted.includes(c.id)) && (!args.part || c.part === args.part))
  // Held-out clips first: if the run is cut short, they are the ones measured.
  .sort((a, b) => (a.part === b.part ? 0 : a.part === 'held-out' ? -1 : 1));

/** Clips measured by an earlier run into the same file and not run now (a run of one part keeps the other's). */
const earlier = existsSync(args.out!)
  ? (JSON.parse(readFileSync(args.out!, 'utf8')) as { clips: Row[]; failed?: Array<{ id: string; part: string; error: string }> })
  : { clips: [], failed: [] };
const notRunNow = (r: { id: string }) => !chosen.some((c) => c.id === r.id);
const earlierRows = earlier.clips.filter(notRunNow);
const earlierFailures = (earlier.failed ?? []).filter(notRunNow);

const key = testKey('d');
// Jobs are polled 5 times a second: no rate limit.
const server = await startServer(
  { VOXD_API_KEYS: key, VOXD_LOG_LEVEL: 'warn', VOXD_RATE_LIMIT_PER_MINUTE: '1000000' },
  { dataDir: makeTempDir('bench-dubbing') },
);
const api = new Api(server.base, key);
const campp = await CamppEncoder.load(await camppModelPath(), { threads: 1 });
const embed = (samples: Float32Array) => campp.embedUtterance({ samples, sampleRate: camppSampleRate, channels: 1 });
const at16k = async (file: string) => (await decodeFile(file, { sampleRate: camppSampleRate, channels: 1 })).samples;

const loadAtStart = round(loadavg()[0]!);
const rows: Row[] = [];
const failures: Array<{ id: string; part: string; error: string }> = [];
try {
  await waitUntilReady(server.base, 900_000);
  const builtins = await builtinEmbeddings();
  for (const clip of chosen) {
    try {
      const row = await dubClip(clip, builtins);
      rows.push(row);
      process.stderr.write(`${clip.id}: ${JSON.stringify(row.summary)}\n`);
    } catch (error) {
      // A failed dub is a finding: recorded with its reason, and the other clips still run.
      failures.push({ id: clip.id, part: clip.part, error: error instanceof Error ? error.message : String(error) });
      process.stderr.write(`${clip.id}: FAILED ${failures.at(-1)!.error}\n`);
    }
    writeResults(rows);
  }
} finally {
  await campp.close();
  server.child.kill('SIGTERM');
  await server.exited;
}

/** CAM++ embeddings of every built-in English voice reading one sentence (the speech kept beside the clips for the next run). */
async function builtinEmbeddings(): Promise<Map<string, Float32Array>> {
  const response = await api.fetch('/v1/voices?type=builtin&language=en');
  if (!response.ok) throw new Error(`voices: ${response.status} ${await response.text()}`);
  const { voices } = (await response.json()) as { voices: Array<{ voice_id: string }> };
  const embeddings = new Map<string, Float32Array>();
  const dir = path.join(clipsDir, 'builtin-voices');
  await mkdir(dir, { recursive: true });
  for (const { voice_id } of voices) {
    const file = path.join(dir, `${voice_id}.wav`);
    if (!existsSync(file)) {
      const speech = await api.postJson('/v1/audio/tts', { text: builtinSentence, voice_id, format: 'wav' });
      if (!speech.ok) throw new Error(`tts ${voice_id}: ${speech.status} ${await speech.text()}`);
      await writeFile(file, Buffer.from(await speech.arrayBuffer()));
    }
    embeddings.set(voice_id, await embed(await at16k(file)));
  }
  process.stderr.write(`${embeddings.size} built-in English voices embedded\n`);
  return embeddings;
}

async function download(url: string, file: string): Promise<string> {
  const response = await api.fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  await writeFile(file, Buffer.from(await response.arrayBuffer()));
  return file;
}

async function dubClip(clip: DubbingClip, builtins: Map<string, Float32Array>) {
  const clipDir = written[clip.id]!;
  const durationSeconds = clip.mixture.length / clip.sampleRate;
  const fields: Record<string, string> = { target_language: clip.targetLanguage, consent: 'true', format: 'wav' };
  if (args['num-speakers']) fields.num_speakers = String(clip.speakers.length);
  const submitted = await api.postForm('/v1/dubbing', fields, { audio: path.join(clipDir, 'mixture.wav') });
  if (submitted.status !== 202) throw new Error(`${clip.id}: ${submitted.status} ${await submitted.text()}`);
  const { id } = (await submitted.json()) as Job;
  const stages: string[] = [];
  const job = await api.waitFor(
    id,
    (j) => {
      const stage = j.progress?.stage;
      if (stage && stages.at(-1) !== stage) stages.push(stage);
      return ['succeeded', 'failed', 'cancelled'].includes(j.status);
    },
    3_600_000,
  );
  if (job.status !== 'succeeded') throw new Error(`${clip.id}: ${job.status} ${JSON.stringify(job.error)}`);
  const finished = (job as Job & { finished_at: string }).finished_at;
  const runSeconds = (Date.parse(finished) - Date.parse(job.started_at!)) / 1000;
  const result = job.result as DubResult;
  const outDir = path.join(clipDir, 'dub');
  await mkdir(outDir, { recursive: true });
  const dubFile = await download(result.files.audio.url, path.join(outDir, 'dubbed.wav'));
  const dialogueFile = await download(result.files.dialogue.url, path.join(outDir, 'dialogue.wav'));
  const load = async (file: string) => (await decodeFile(file, { sampleRate: clip.sampleRate, channels: 1 })).samples;
  const dub = await load(dubFile);
  const dubbedDialogue = await load(dialogueFile);

  // Onsets: the clip's lines against where the dub placed its lines (and where the service found them).
  const placed = result.lines.map((l) => ({ startSeconds: l.dubbedStartSeconds, endSeconds: l.dubbedEndSeconds }));
  const matches = matchLines(clip.lines, placed);
  const detected = matchLines(
    clip.lines,
    result.lines.map((l) => ({ startSeconds: l.sourceStartSeconds, endSeconds: l.sourceEndSeconds })),
  );
  const onsetErrors = matches.flatMap((m) => (m.onsetErrorSeconds === null ? [] : [m.onsetErrorSeconds]));
  const overruns = matches.flatMap((m) => (m.overrunSeconds === null ? [] : [m.overrunSeconds]));

  // Intelligibility: the dubbed dialogue transcribed by the service, against the dub's own English text.
  const transcription = await api.postForm('/v1/audio/transcribe', { language: 'en', response_format: 'json' }, { audio: dialogueFile });
  if (!transcription.ok) throw new Error(`${clip.id} transcription: ${transcription.status} ${await transcription.text()}`);
  const heard = ((await transcription.json()) as { text: string }).text;
  const dubText = result.lines.map((l) => l.text).join(' ');
  const wer = errorRate(dubText, heard, 'en');

  // Background kept and the original dialogue left in it.
  const kept = residual(dub, dubbedDialogue);
  const backgroundDb = backgroundSiSdr(dub, dubbedDialogue, clip.background);
  const leakDb = dialogueLeakDb(kept, clip.dialogue, clip.background);

  // Speakers: each dubbed line (its source speaker: the clip line paired with it, else the one it overlaps most).
  const dialogue16k = await at16k(path.join(clipDir, 'dialogue.wav'));
  const dubbed16k = await at16k(dialogueFile);
  const cut = (samples: Float32Array, startSeconds: number, endSeconds: number) =>
    samples.subarray(Math.floor(startSeconds * camppSampleRate), Math.ceil(endSeconds * camppSampleRate));
  const speakerEmbeddings = new Map<string, Float32Array>();
  for (const speaker of clip.speakers) {
    const own = clip.lines.filter((l) => l.speaker === speaker).map((l) => cut(dialogue16k, l.startSeconds, l.endSeconds));
    speakerEmbeddings.set(speaker, await embed(concatSamples(own)));
  }
  const sourceOf = (index: number): string => {
    const paired = matches.find((m) => m.dubbed === index);
    if (paired) return clip.lines[paired.source]!.speaker;
    const line = result.lines[index]!;
    const overlap = (l: { startSeconds: number; endSeconds: number }) =>
      Math.min(l.endSeconds, line.sourceEndSeconds) - Math.max(l.startSeconds, line.sourceStartSeconds);
    return clip.lines.reduce((best, l) => (overlap(l) > overlap(best) ? l : best)).speaker;
  };
  const embedded = [];
  // Which voice spoke each embedded line: a speaker too brief to clone is voiced by a built-in voice, which no line can beat.
  const spokenBy: Array<DubResult['voices'][number] | undefined> = [];
  for (const [index, line] of result.lines.entries()) {
    if (line.dubbedEndSeconds - line.dubbedStartSeconds < minEmbedSeconds) continue;
    embedded.push({ speaker: sourceOf(index), embedding: await embed(cut(dubbed16k, line.dubbedStartSeconds, line.dubbedEndSeconds)) });
    spokenBy.push(result.voices.find((v) => v.speaker === line.speaker));
  }
  const similarities = lineSimilarities(embedded, speakerEmbeddings, builtins);

  const share = (values: boolean[]) => (values.length === 0 ? null : round(values.filter(Boolean).length / values.length));
  return {
    id: clip.id,
    part: clip.part,
    languages: clip.languages,
    speakers: clip.speakers.length,
    duration_seconds: round(durationSeconds),
    detected_language: result.source_language,
    stages,
    summary: {
      median_onset_error_seconds: onsetErrors.length > 0 ? round(median(onsetErrors)) : null,
      worst_onset_error_seconds: onsetErrors.length > 0 ? round(Math.max(...onsetErrors)) : null,
      lines: clip.lines.length,
      dubbed_lines: result.lines.length,
      unpaired_lines: matches.filter((m) => m.dubbed === null).length,
      worst_overrun_seconds: overruns.length > 0 ? round(Math.max(...overruns)) : null,
      wer: round(wer.rate),
      background_si_sdr_db: round(backgroundDb),
      original_dialogue_leak_db: round(leakDb),
      lines_closest_to_own_speaker: share(similarities.map((s) => s.closestToOwn)),
      lines_closer_than_builtins: share(similarities.map((s) => s.closerThanBuiltins)),
      rtf: round(runSeconds / durationSeconds),
      seconds_per_minute_of_input: round((60 * runSeconds) / durationSeconds),
    },
    wer_counts: { errors: wer.errors, reference_words: wer.referenceLength },
    dub_text: dubText,
    heard_text: heard,
    lines: clip.lines.map((line, i) => ({
      ...line,
      start_seconds: round(line.startSeconds),
      detected_start_seconds: detected[i]!.dubbed === null ? null : round(result.lines[detected[i]!.dubbed!]!.sourceStartSeconds),
      dubbed: matches[i]!.dubbed === null ? null : { ...result.lines[matches[i]!.dubbed!]!, index: matches[i]!.dubbed },
      onset_error_seconds: matches[i]!.onsetErrorSeconds === null ? null : round(matches[i]!.onsetErrorSeconds!),
      overrun_seconds: matches[i]!.overrunSeconds === null ? null : round(matches[i]!.overrunSeconds!),
    })),
    speaker_similarity: similarities.map((s, i) => ({
      ...s,
      voice_id: spokenBy[i]?.voice_id ?? null,
      cloned: spokenBy[i]?.cloned ?? false,
      ownSimilarity: round(s.ownSimilarity),
      closestOtherSpeaker: s.closestOtherSpeaker && { ...s.closestOtherSpeaker, similarity: round(s.closestOtherSpeaker.similarity) },
      closestBuiltin: s.closestBuiltin && { ...s.closestBuiltin, similarity: round(s.closestBuiltin.similarity) },
    })),
    voices: result.voices,
    warnings: result.warnings,
  };
}

type Row = Awaited<ReturnType<typeof dubClip>>;
/** A part's figures: onsets pooled over its lines, WER pooled over its words, the rest per clip (mean, worst). */
function summarise(part: Row[]) {
  if (part.length === 0) return null;
  const onsets = part.flatMap((r) => r.lines.flatMap((l) => (l.onset_error_seconds === null ? [] : [l.onset_error_seconds])));
  const overruns = part.flatMap((r) => r.lines.flatMap((l) => (l.overrun_seconds === null ? [] : [l.overrun_seconds])));
  const similarities = part.flatMap((r) => r.speaker_similarity);
  const cloned = similarities.filter((s) => s.cloned);
  const errors = part.reduce((sum, r) => sum + r.wer_counts.errors, 0);
  const words = part.reduce((sum, r) => sum + r.wer_counts.reference_words, 0);
  const seconds = part.reduce((sum, r) => sum + r.duration_seconds, 0);
  const runSeconds = part.reduce((sum, r) => sum + r.summary.rtf * r.duration_seconds, 0);
  const mean = (values: number[]) => round(values.reduce((s, v) => s + v, 0) / values.length);
  return {
    clips: part.map((r) => r.id),
    input_seconds: round(seconds),
    median_onset_error_seconds: onsets.length > 0 ? round(median(onsets)) : null,
    worst_onset_error_seconds: onsets.length > 0 ? round(Math.max(...onsets)) : null,
    lines: part.reduce((sum, r) => sum + r.summary.lines, 0),
    unpaired_lines: part.reduce((sum, r) => sum + r.summary.unpaired_lines, 0),
    lines_over_next_speaker: overruns.filter((o) => o > 0.05).length,
    worst_overrun_seconds: overruns.length > 0 ? round(Math.max(...overruns)) : null,
    wer: words > 0 ? round(errors / words) : null,
    background_si_sdr_db: {
      mean: mean(part.map((r) => r.summary.background_si_sdr_db)),
      worst: Math.min(...part.map((r) => r.summary.background_si_sdr_db)),
    },
    original_dialogue_leak_db: {
      mean: mean(part.map((r) => r.summary.original_dialogue_leak_db)),
      worst: Math.max(...part.map((r) => r.summary.original_dialogue_leak_db)),
    },
    lines_closest_to_own_speaker:
      similarities.length > 0 ? round(similarities.filter((s) => s.closestToOwn).length / similarities.length) : null,
    lines_closer_than_builtins:
      similarities.length > 0 ? round(similarities.filter((s) => s.closerThanBuiltins).length / similarities.length) : null,
    embedded_lines: similarities.length,
    // The same share over the lines a voice cloned from their speaker spoke (the rest: a built-in voice stood in).
    cloned_lines: cloned.length,
    cloned_lines_closest_to_own_speaker: cloned.length > 0 ? round(cloned.filter((s) => s.closestToOwn).length / cloned.length) : null,
    rtf: round(runSeconds / seconds),
    seconds_per_minute_of_input: round((60 * runSeconds) / seconds),
  };
}

/** Written after every clip, so a run cut short keeps what it measured. */
function writeResults(measured: Row[]) {
  const rows = [...measured, ...earlierRows].sort((a, b) => (a.part === b.part ? 0 : a.part === 'held-out' ? -1 : 1));
  const results = {
    bench: 'dubbing',
    date: new Date().toISOString(),
    load_average_1m: { at_start: loadAtStart, at_end: round(loadavg()[0]!) },
    options: { clips: rows.map((r) => r.id), num_speakers_given: args['num-speakers'], format: 'wav', voices: 'clone' },
    clip_set: allClips.map((c) => ({
      id: c.id,
      part: c.part,
      languages: c.languages,
      speakers: c.speakers.length,
      lines: c.lines.length,
      duration_seconds: round(c.mixture.length / c.sampleRate),
    })),
    targets,
    failed: [...failures, ...earlierFailures],
    held_out: summarise(rows.filter((r) => r.part === 'held-out')),
    tuning: summarise(rows.filter((r) => r.part === 'tuning')),
    clips: rows,
  };
  writeFileSync(args.out!, `${JSON.stringify(results, null, 2)}\n`);
  return results;
}
const results = writeResults(rows);
process.stdout.write(`${JSON.stringify({ held_out: results.held_out, tuning: results.tuning }, null, 2)}\n`);

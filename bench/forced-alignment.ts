/**
 * Forced alignment (POST /v1/audio/align, issue 38 point 2) against an independent aligner, side by side in one run:
 * each eval ASR clip (../shared/eval/asr, every language) is aligned to its reference transcript, and faster-whisper
 * transcribes the same clip with word timestamps on the same Whisper base weights (`--python PATH`: a venv's python with
 * faster-whisper; `--reference-model DIR`: the CTranslate2 directory; int8, beam 5, no VAD). Words are paired in order by
 * spelling (letters and digits, case folded; in Chinese and Japanese by the reference word's first character); figures
 * are the median and worst |start difference|. A mismatched-text case per clip replaces every third word with a word of
 * another clip and reports the confidence of words said and not said. No parameter is tuned: English is reported as the
 * tuning part all the same and the other languages first. `--only LANG` runs one language. Results:
 * bench/results/forced-alignment.json.
 *
 * `--long [--language en] [--minutes 3,20] [--before DIR]`: long audio (cut into windows at pauses, the text with it).
 * For each length, the language's eval clips are concatenated, in a new shuffled order each round (seeded), with 0.4-1.2 s
 * pauses, until the file lasts that many minutes; it is aligned to the clips' transcripts in one request to a server
 * process of its own (this checkout's sources under tsx; with `--before`, first the same for the checkout in DIR, side by
 * side), after a short request that loads the models. Measured on the process: peak RSS during the request (VmHWM, reset
 * before it) and CPU seconds per audio second. faster-whisper transcribes the first (shortest) file: median and worst
 * |start difference| of this checkout's words, and how many words the two checkouts time alike.
 * Results: bench/results/forced-alignment-long.json.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, openAsBlob, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, fetch, FormData } from 'undici';
import { packageRoot } from '../src/core/version.js';
import { buildTestApp, evalDir, multipartBody } from '../test/helpers/app.js';
import { modelFile } from '../test/helpers/models.js';
import { bare, median, pairStarts, referenceWordTimes, round, type TimedWord } from './lib/reference-word-times.js';
import { fixedKey, startServerProcess } from './lib/server-process.js';

const { values: args } = parseArgs({
  options: {
    python: { type: 'string' },
    'reference-model': { type: 'string' },
    only: { type: 'string' },
    long: { type: 'boolean' },
    language: { type: 'string', default: 'en' },
    minutes: { type: 'string', default: '3,20' },
    before: { type: 'string' },
  },
});
if (!args.python || !args['reference-model']) throw new Error('--python and --reference-model are required (the reference aligner)');

const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  asr: Array<{ id: string; language: string; transcript: string; audio: string; duration_s: number }>;
};
const clips = manifest.asr.filter((e) => !args.only || e.language === args.only);
const unspaced = new Set(['zh', 'ja']);

await modelFile('whisper-base', 'ggml-base.bin');
if (args.long) {
  await benchLong(args.language, args.minutes.split(',').map(Number), args.before);
  process.exit(0);
}
const app = await buildTestApp();
const align = async (file: string, text: string, language: string): Promise<{ words: TimedWord[]; seconds: number }> => {
  const form = multipartBody({ text, language }, { audio: { filename: 'clip.wav', content: readFileSync(file) } });
  const startedAt = performance.now();
  const r = await app.app.inject({
    method: 'POST',
    url: '/v1/audio/align',
    headers: { authorization: `Bearer ${app.key}`, 'content-type': form.contentType },
    payload: form.body,
  });
  if (r.statusCode !== 200) throw new Error(`${file}: ${r.statusCode} ${r.body}`);
  return { words: r.json<{ words: TimedWord[] }>().words, seconds: (performance.now() - startedAt) / 1000 };
};

const aligned = [];
for (const clip of clips) {
  const file = path.join(evalDir, clip.audio);
  const right = await align(file, clip.transcript, clip.language);
  // Every third word (character in zh/ja) replaced by one from another clip of another language: words not said.
  const neighbour = manifest.asr[(manifest.asr.indexOf(clip) + 1) % manifest.asr.length]!.transcript;
  const other = unspaced.has(clip.language) ? [...neighbour] : neighbour.split(/\s+/);
  const units = unspaced.has(clip.language) ? [...clip.transcript] : clip.transcript.split(/\s+/);
  const swapped = units.map((_, k) => k).filter((k) => k % 3 === 1);
  const wrongText = units.map((u, k) => (k % 3 === 1 ? other[k % other.length]! : u)).join(unspaced.has(clip.language) ? '' : ' ');
  const wrong = await align(file, wrongText, clip.language);
  aligned.push({ ...clip, file, words: right.words, seconds: right.seconds, wrong: wrong.words, wrongText, swapped });
  process.stderr.write(`${clip.id}: ${right.words.length} words, ${right.seconds.toFixed(1)} s\n`);
}
await app.close();

const reference = referenceWordTimes(
  args.python,
  args['reference-model'],
  aligned.map((a) => ({ file: a.file, language: a.language })),
);

const rows = aligned.map((a) => {
  const heard = reference[a.file] ?? [];
  // Chinese and Japanese: one of our words is a character; faster-whisper's words start with one.
  const pairs = pairStarts(a.words, heard, (reference, word) =>
    unspaced.has(a.language) ? bare(reference).length > 0 && bare(reference)[0] === bare(word) : bare(reference) === bare(word),
  );
  // In the mismatched text, words at swapped positions are not said (unless the swap happens to say the same word).
  const notSaid = a.wrong.filter((_, k) => a.swapped.includes(k)).map((w) => w.confidence ?? 0);
  const said = a.wrong.filter((_, k) => !a.swapped.includes(k)).map((w) => w.confidence ?? 0);
  return {
    id: a.id,
    language: a.language,
    words: a.words.length,
    paired: pairs.length,
    median_start_difference_seconds: round(median(pairs.map((p) => p.difference))),
    rtf: round(a.seconds / a.duration_s),
    mismatched: { median_confidence_said: round(median(said)), median_confidence_not_said: round(median(notSaid)) },
    pairs,
  };
});
const summarise = (chosen: typeof rows) => {
  const pairs = chosen.flatMap((r) => r.pairs.map((p) => ({ ...p, id: r.id })));
  const worst = pairs.reduce<(typeof pairs)[number] | undefined>((a, b) => (!a || b.difference > a.difference ? b : a), undefined);
  return {
    clips: chosen.length,
    words: chosen.reduce((sum, r) => sum + r.words, 0),
    paired: pairs.length,
    median_start_difference_seconds: round(median(pairs.map((p) => p.difference))),
    worst_word: worst,
    mismatched_median_confidence_said: round(median(chosen.map((r) => r.mismatched.median_confidence_said))),
    mismatched_median_confidence_not_said: round(median(chosen.map((r) => r.mismatched.median_confidence_not_said))),
  };
};
const languages = [...new Set(rows.map((r) => r.language))];
const tuningLanguages = ['en'];
const results = {
  bench: 'forced-alignment',
  date: new Date().toISOString(),
  load_average_1m: round(loadavg()[0]!),
  reference: 'faster-whisper word timestamps on the same Whisper base weights (CTranslate2, int8, beam 5, no VAD), same clips',
  target: 'median start difference <= 0.120 s',
  held_out: summarise(rows.filter((r) => !tuningLanguages.includes(r.language))),
  tuning: summarise(rows.filter((r) => tuningLanguages.includes(r.language))),
  by_language: Object.fromEntries(languages.map((language) => [language, summarise(rows.filter((r) => r.language === language))])),
  clips: rows,
};
writeFileSync(path.join(packageRoot, 'bench/results/forced-alignment.json'), `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write(
  `${JSON.stringify({ held_out: results.held_out, tuning: results.tuning, by_language: results.by_language }, null, 2)}\n`,
);

/** One server process's alignment of a long file: its words, wall time, CPU time and peak RSS during the request. */
interface LongRun {
  words: TimedWord[];
  wallSeconds: number;
  cpuSeconds: number;
  peakRssBytes: number;
}

async function alignInProcess(source: string, file: string, text: string, language: string, warmUp: string): Promise<LongRun> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'voxd-align-long-data-'));
  const key = fixedKey('align');
  const server = await startServerProcess(
    dataDir,
    {
      VOXD_API_KEYS: key,
      VOXD_LOCAL_MODEL_DIRS: path.join(evalDir, '..', 'models'),
      VOXD_LOG_LEVEL: 'warn',
    },
    source,
  );
  const pid = server.child.pid!;
  const status = (field: string): number =>
    Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
  // utime + stime, in clock ticks (100 a second).
  const cpuTicks = (): number => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  const post = async (audio: string, words: string): Promise<TimedWord[]> => {
    const form = new FormData();
    form.set('audio', await openAsBlob(audio), path.basename(audio));
    form.set('text', words);
    form.set('language', language);
    const r = await fetch(`${server.base}/v1/audio/align`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
      // The answer comes when the whole file is aligned: no time limit on it.
      dispatcher: new Agent({ headersTimeout: 0, bodyTimeout: 0 }),
    });
    if (!r.ok) throw new Error(`${source}: ${r.status} ${await r.text()}`);
    return ((await r.json()) as { words: TimedWord[] }).words;
  };
  try {
    await post(path.join(evalDir, warmUp), 'warm up');
    // The peak from here on: what the long request adds to a process with its models loaded.
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    const ticks = cpuTicks();
    const startedAt = performance.now();
    const words = await post(file, text);
    return {
      words,
      wallSeconds: (performance.now() - startedAt) / 1000,
      cpuSeconds: (cpuTicks() - ticks) / 100,
      peakRssBytes: status('VmHWM'),
    };
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function benchLong(language: string, minuteList: number[], before: string | undefined): Promise<void> {
  const pool = manifest.asr.filter((e) => e.language === language);
  const sampleRate = 16000;
  const pcm = (file: string): Buffer =>
    execFileSync('ffmpeg', ['-v', 'error', '-i', file, '-f', 's16le', '-ac', '1', '-ar', String(sampleRate), '-'], { maxBuffer: 1 << 28 });
  const clipAudio = new Map(pool.map((clip) => [clip.id, pcm(path.join(evalDir, clip.audio))]));
  const dir = mkdtempSync(path.join(tmpdir(), 'voxd-align-long-'));
  /** The file of `minutes` and its text; a fixed seed: every run builds the same file. */
  const build = (minutes: number): { file: string; text: string; audioSeconds: number } => {
    let seed = 38;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const parts: Buffer[] = [];
    const texts: string[] = [];
    let bytes = 0;
    while (bytes < minutes * 60 * sampleRate * 2) {
      const order = [...pool].sort(() => random() - 0.5);
      for (const clip of order) {
        parts.push(clipAudio.get(clip.id)!, Buffer.alloc(2 * Math.round(sampleRate * (0.4 + 0.8 * random()))));
        texts.push(clip.transcript);
        bytes += clipAudio.get(clip.id)!.length + parts.at(-1)!.length;
      }
    }
    const file = path.join(dir, `long-${minutes}.wav`);
    const raw = path.join(dir, `long-${minutes}.pcm`);
    writeFileSync(raw, Buffer.concat(parts));
    execFileSync('ffmpeg', ['-v', 'error', '-f', 's16le', '-ar', String(sampleRate), '-ac', '1', '-i', raw, file]);
    rmSync(raw);
    return { file, text: texts.join(unspaced.has(language) ? '' : ' '), audioSeconds: bytes / 2 / sampleRate };
  };
  const figures = (run: LongRun, audioSeconds: number) => ({
    peak_rss_mb: Math.round(run.peakRssBytes / 2 ** 20),
    wall_seconds: round(run.wallSeconds),
    cpu_seconds: round(run.cpuSeconds),
    cpu_seconds_per_audio_second: round(run.cpuSeconds / audioSeconds),
    one_hour_extrapolation_cpu_seconds: Math.round((3600 * run.cpuSeconds) / audioSeconds),
  });
  const warmUp = pool[0]!.audio;
  const files = [];
  let accuracy: Record<string, unknown> | undefined;
  for (const minutes of minuteList) {
    const { file, text, audioSeconds } = build(minutes);
    const previous = before ? await alignInProcess(before, file, text, language, warmUp) : undefined;
    const after = await alignInProcess(packageRoot, file, text, language, warmUp);
    const alike = previous
      ? after.words.filter((w, i) => previous.words[i]?.start === w.start && previous.words[i]?.end === w.end).length
      : null;
    files.push({
      minutes,
      audio_seconds: round(audioSeconds),
      words: after.words.length,
      ...(previous ? { before: figures(previous, audioSeconds) } : {}),
      after: figures(after, audioSeconds),
      words_timed_alike_before_and_after: alike,
    });
    process.stderr.write(`${JSON.stringify(files.at(-1))}\n`);
    if (accuracy) continue;
    const heard = referenceWordTimes(args.python!, args['reference-model']!, [{ file, language }])[file] ?? [];
    const pairs = pairStarts(
      after.words,
      heard,
      (reference, word) =>
        unspaced.has(language) ? bare(reference).length > 0 && bare(reference)[0] === bare(word) : bare(reference) === bare(word),
      10,
    );
    const worst = pairs.reduce<(typeof pairs)[number] | undefined>((a, b) => (!a || b.difference > a.difference ? b : a), undefined);
    const sorted = pairs.map((p) => p.difference).sort((a, b) => a - b);
    accuracy = {
      audio_seconds: round(audioSeconds),
      words: after.words.length,
      paired: pairs.length,
      median_start_difference_seconds: round(median(sorted)),
      p90_start_difference_seconds: round(sorted[Math.floor(0.9 * sorted.length)] ?? Number.NaN),
      worst_word: worst,
      words_over_1_second_off: sorted.filter((d) => d > 1).length,
      pairs,
    };
  }
  rmSync(dir, { recursive: true, force: true });
  const results = {
    bench: 'forced-alignment --long',
    date: new Date().toISOString(),
    load_average_1m: round(loadavg()[0]!),
    reference: 'faster-whisper word timestamps on the same Whisper base weights (CTranslate2, int8, beam 5, no VAD), same file',
    target: 'median start difference <= 0.120 s; a 1-hour file well under real time; memory that does not grow with the file',
    note:
      'No parameter was tuned on these files (window length, pauses and padding were set before the first run). Each ' +
      'alignment runs in a server process of its own (sources under tsx, MALLOC_ARENA_MAX as npm start sets it), after a ' +
      'short request that loads the models; peak RSS is the process peak during the long request.' +
      (before ? ` before: the checkout at ${before}.` : ''),
    language,
    clips: pool.map((c) => c.id),
    files,
    accuracy,
  };
  writeFileSync(path.join(packageRoot, 'bench/results/forced-alignment-long.json'), `${JSON.stringify(results, null, 2)}\n`);
  const { accuracy: detail, ...summary } = results;
  const { pairs: _, ...accuracySummary } = detail ?? {};
  process.stdout.write(`${JSON.stringify({ ...summary, accuracy: accuracySummary }, null, 2)}\n`);
}

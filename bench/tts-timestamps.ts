/**
 * Word times of speech with timestamps (issue 38, point 1) against an independent aligner, side by side in one run: eval
 * transcripts are spoken through POST /v1/audio/tts/with-timestamps and the returned audio is transcribed by
 * faster-whisper with word timestamps on the same Whisper base weights (`--python PATH`: a venv's python with
 * faster-whisper; `--reference-model DIR`: the CTranslate2 directory, see ../shared/notes/whisper-weights.md; int8, beam 5,
 * no VAD). Each written word is paired with the next reference word of the same spelling (letters and digits, case
 * folded); words the reference spells otherwise (numbers as digits) are left out and counted. Figures: median and worst
 * |start difference| per language and overall, the worst word named, and the signed median (ours minus the reference).
 * Engines (`--engines`, default all; a run of some keeps the others' figures in the results file):
 * - kokoro: each transcript of a Kokoro language written with spaces (en, es, fr, it, pt; Mandarin and Japanese have no
 *   written word boundaries to compare) in the language's default voice. Split before tuning: the English sentences are
 *   the tuning part (they set the engine's one constant, a shift of its word times), the others are held out.
 * - piper: the English transcripts in en_US-joe-medium (the one Piper voice installed by default in tests). Split: the
 *   1st, 3rd and 5th English sentences in manifest order are the tuning part, the others held out.
 * - espeak: the English (en-us) and German (de) transcripts. Split: as for Piper; German is held out whole.
 * Each sentence is also spoken by POST /v1/audio/tts (no word times): `timing_cost_ratio` is the time with word times over
 * the time without. Results: bench/results/tts-timestamps.json.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { packageRoot } from '../src/core/version.js';
import { buildTestApp, evalDir, makeTempDir } from '../test/helpers/app.js';
import { modelFile } from '../test/helpers/models.js';
import { median, pairStarts, referenceWordTimes, round, type TimedWord } from './lib/reference-word-times.js';

const { values: args } = parseArgs({
  options: {
    python: { type: 'string' },
    'reference-model': { type: 'string' },
    only: { type: 'string' },
    engines: { type: 'string' },
  },
});
if (!args.python || !args['reference-model']) throw new Error('--python and --reference-model are required (the reference aligner)');

type Engine = 'kokoro' | 'piper' | 'espeak';
const engineVoices: Record<Engine, Record<string, string>> = {
  kokoro: { en: 'af_heart', es: 'ef_dora', fr: 'ff_siwis', it: 'if_sara', pt: 'pf_dora' },
  piper: { en: 'piper-en_US-joe-medium' },
  espeak: { en: 'espeak-en-us', de: 'espeak-de' },
};
/** Sentence ids of the tuning part, per engine (the rest is held out); see the header. */
const tuningPart = (engine: Engine, entries: Array<{ id: string; language: string }>): Set<string> => {
  const english = entries.filter((e) => e.language === 'en');
  return new Set(engine === 'kokoro' ? english.map((e) => e.id) : english.filter((_, i) => i % 2 === 0).map((e) => e.id));
};
const engines = (args.engines?.split(',') ?? Object.keys(engineVoices)) as Engine[];
for (const engine of engines) if (!engineVoices[engine]) throw new Error(`--engines: unknown engine ${engine}`);
const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  asr: Array<{ id: string; language: string; transcript: string }>;
};

await Promise.all(['kokoro-82m', 'kokoro-voices', 'misaki-lexicon', 'piper-en_US-joe-medium'].map((id) => modelFile(id, '')));
const app = await buildTestApp();
const dir = makeTempDir('tts-timestamps');
type Spoken = {
  engine: Engine;
  id: string;
  language: string;
  file: string;
  words: TimedWord[];
  elapsedSeconds: number;
  untimedSeconds: number;
  audioSeconds: number;
};
const spoken: Spoken[] = [];
const speak = async (url: string, payload: Record<string, unknown>) => {
  const startedAt = performance.now();
  const r = await app.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${app.key}` }, payload });
  if (r.statusCode !== 200) throw new Error(`${url} ${JSON.stringify(payload)}: ${r.statusCode} ${r.body}`);
  return { r, seconds: (performance.now() - startedAt) / 1000 };
};
for (const engine of engines) {
  const voices = engineVoices[engine];
  for (const entry of manifest.asr.filter((e) => voices[e.language] && (!args.only || e.language === args.only))) {
    const payload = {
      text: entry.transcript,
      voice_id: voices[entry.language],
      language: entry.language,
      format: 'wav',
      sample_rate: 16000,
    };
    const untimed = await speak('/v1/audio/tts', payload);
    const timed = await speak('/v1/audio/tts/with-timestamps', payload);
    const body = timed.r.json<{ audio_base64: string; words: TimedWord[] }>();
    const file = path.join(dir, `${engine}_${entry.id.replace(/\W/g, '_')}.wav`);
    const audio = Buffer.from(body.audio_base64, 'base64');
    writeFileSync(file, audio);
    spoken.push({
      engine,
      id: entry.id,
      language: entry.language,
      file,
      words: body.words,
      elapsedSeconds: timed.seconds,
      untimedSeconds: untimed.seconds,
      audioSeconds: (audio.length - 44) / 2 / 16000,
    });
    process.stderr.write(`${engine} ${entry.id}: ${body.words.length} words\n`);
  }
}
await app.close();

const reference = referenceWordTimes(
  args.python,
  args['reference-model'],
  spoken.map((s) => ({ file: s.file, language: s.language })),
);

const rows = spoken.map((s) => {
  const heard = reference[s.file] ?? [];
  const pairs = pairStarts(s.words, heard);
  const worst = pairs.reduce<(typeof pairs)[number] | undefined>((a, b) => (!a || b.difference > a.difference ? b : a), undefined);
  return {
    engine: s.engine,
    id: s.id,
    language: s.language,
    words: s.words.length,
    paired: pairs.length,
    median_start_difference_seconds: round(median(pairs.map((p) => p.difference))),
    worst,
    rtf: round(s.elapsedSeconds / s.audioSeconds),
    timing_cost_ratio: round(s.elapsedSeconds / s.untimedSeconds),
    pairs,
  };
});
const summarise = (chosen: typeof rows) => {
  const pairs = chosen.flatMap((r) => r.pairs.map((p) => ({ ...p, id: r.id })));
  const worst = pairs.reduce<(typeof pairs)[number] | undefined>((a, b) => (!a || b.difference > a.difference ? b : a), undefined);
  return {
    sentences: chosen.length,
    words: chosen.reduce((sum, r) => sum + r.words, 0),
    paired: pairs.length,
    median_start_difference_seconds: round(median(pairs.map((p) => p.difference))),
    median_signed_difference_seconds: round(median(pairs.map((p) => p.voxd - p.reference))),
    worst_word: worst,
    median_timing_cost_ratio: round(median(chosen.map((r) => r.timing_cost_ratio))),
  };
};
const engineResults = (engine: Engine) => {
  const chosen = rows.filter((r) => r.engine === engine);
  const tuning = tuningPart(
    engine,
    manifest.asr.filter((e) => engineVoices[engine][e.language]),
  );
  const languages = [...new Set(chosen.map((r) => r.language))];
  return {
    date: new Date().toISOString(),
    load_average_1m: round(loadavg()[0]!),
    voices: engineVoices[engine],
    held_out: summarise(chosen.filter((r) => !tuning.has(r.id))),
    tuning: summarise(chosen.filter((r) => tuning.has(r.id))),
    by_language: Object.fromEntries(languages.map((language) => [language, summarise(chosen.filter((r) => r.language === language))])),
    sentences: chosen.map(({ engine: _, ...row }) => row),
  };
};
const resultsPath = path.join(packageRoot, 'bench/results/tts-timestamps.json');
const previous = existsSync(resultsPath) ? (JSON.parse(readFileSync(resultsPath, 'utf8')) as Record<string, unknown>) : {};
const previousEngines = (previous.engines ?? {}) as Record<string, unknown>;
// Kokoro's figures stay at the top level (as first published); the other engines go under `engines`.
const kokoro = engines.includes('kokoro') ? engineResults('kokoro') : undefined;
const results = {
  ...previous,
  bench: 'tts-timestamps',
  reference: 'faster-whisper word timestamps on the same Whisper base weights (CTranslate2, int8, beam 5, no VAD), on the returned audio',
  target: 'median start difference <= 0.100 s',
  ...(kokoro
    ? {
        date: kokoro.date,
        load_average_1m: kokoro.load_average_1m,
        held_out: kokoro.held_out,
        tuning: kokoro.tuning,
        by_language: kokoro.by_language,
        sentences: kokoro.sentences,
      }
    : {}),
  engines: {
    ...previousEngines,
    ...Object.fromEntries(engines.filter((e) => e !== 'kokoro').map((engine) => [engine, engineResults(engine)])),
  },
};
writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
const summary = (r: ReturnType<typeof engineResults>) => ({ held_out: r.held_out, tuning: r.tuning, by_language: r.by_language });
process.stdout.write(`${JSON.stringify(Object.fromEntries(engines.map((engine) => [engine, summary(engineResults(engine))])), null, 2)}\n`);

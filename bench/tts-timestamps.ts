/**
 * Word times of speech with timestamps (issue 38, point 1) against an independent aligner, side by side in one run:
 * each eval transcript of a Kokoro language written with spaces (en, es, fr, it, pt; Mandarin and Japanese have no
 * written word boundaries to compare) is spoken through POST /v1/audio/tts/with-timestamps in the language's default
 * voice, and the returned audio is transcribed by faster-whisper with word timestamps on the same Whisper base weights
 * (`--python PATH`: a venv's python with faster-whisper; `--reference-model DIR`: the CTranslate2 directory, see
 * ../shared/notes/whisper-weights.md; int8, beam 5, no VAD). Each written word is paired with the next reference word of
 * the same spelling (letters and digits, case folded); words the reference spells otherwise (numbers as digits) are
 * left out and counted. Figures: median and worst |start difference| per language and overall, the worst word named.
 * Split before tuning: the English sentences are the tuning part (they set the engine's one constant, a shift of its
 * word times), the Spanish, French, Italian and Portuguese ones are held out. Results: bench/results/tts-timestamps.json.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { packageRoot } from '../src/core/version.js';
import { buildTestApp, evalDir, makeTempDir } from '../test/helpers/app.js';
import { modelFile } from '../test/helpers/models.js';
import { median, pairStarts, referenceWordTimes, round, type TimedWord } from './lib/reference-word-times.js';

const { values: args } = parseArgs({
  options: { python: { type: 'string' }, 'reference-model': { type: 'string' }, only: { type: 'string' } },
});
if (!args.python || !args['reference-model']) throw new Error('--python and --reference-model are required (the reference aligner)');

const voices: Record<string, string> = { en: 'af_heart', es: 'ef_dora', fr: 'ff_siwis', it: 'if_sara', pt: 'pf_dora' };
const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  asr: Array<{ id: string; language: string; transcript: string }>;
};
const sentences = manifest.asr.filter((e) => voices[e.language] && (!args.only || e.language === args.only));

await Promise.all(['kokoro-82m', 'kokoro-voices', 'misaki-lexicon'].map((id) => modelFile(id, '')));
const app = await buildTestApp();
const dir = makeTempDir('tts-timestamps');
const spoken: Array<{ id: string; language: string; file: string; words: TimedWord[]; elapsedSeconds: number; audioSeconds: number }> = [];
for (const entry of sentences) {
  const startedAt = performance.now();
  const r = await app.app.inject({
    method: 'POST',
    url: '/v1/audio/tts/with-timestamps',
    headers: { authorization: `Bearer ${app.key}` },
    payload: { text: entry.transcript, voice_id: voices[entry.language], language: entry.language, format: 'wav', sample_rate: 16000 },
  });
  if (r.statusCode !== 200) throw new Error(`${entry.id}: ${r.statusCode} ${r.body}`);
  const body = r.json<{ audio_base64: string; words: TimedWord[] }>();
  const file = path.join(dir, `${entry.id.replace(/\W/g, '_')}.wav`);
  const audio = Buffer.from(body.audio_base64, 'base64');
  writeFileSync(file, audio);
  spoken.push({
    id: entry.id,
    language: entry.language,
    file,
    words: body.words,
    elapsedSeconds: (performance.now() - startedAt) / 1000,
    audioSeconds: (audio.length - 44) / 2 / 16000,
  });
  process.stderr.write(`${entry.id}: ${body.words.length} words\n`);
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
    id: s.id,
    language: s.language,
    words: s.words.length,
    paired: pairs.length,
    median_start_difference_seconds: round(median(pairs.map((p) => p.difference))),
    worst,
    rtf: round(s.elapsedSeconds / s.audioSeconds),
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
    worst_word: worst,
  };
};
const languages = [...new Set(rows.map((r) => r.language))];
const tuningLanguages = ['en'];
const results = {
  bench: 'tts-timestamps',
  date: new Date().toISOString(),
  load_average_1m: round(loadavg()[0]!),
  reference: 'faster-whisper word timestamps on the same Whisper base weights (CTranslate2, int8, beam 5, no VAD), on the returned audio',
  target: 'median start difference <= 0.100 s',
  held_out: summarise(rows.filter((r) => !tuningLanguages.includes(r.language))),
  tuning: summarise(rows.filter((r) => tuningLanguages.includes(r.language))),
  by_language: Object.fromEntries(languages.map((language) => [language, summarise(rows.filter((r) => r.language === language))])),
  sentences: rows,
};
writeFileSync(path.join(packageRoot, 'bench/results/tts-timestamps.json'), `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write(
  `${JSON.stringify({ held_out: results.held_out, tuning: results.tuning, by_language: results.by_language }, null, 2)}\n`,
);

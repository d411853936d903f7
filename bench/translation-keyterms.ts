/**
 * Translation into English and key terms, on the ASR clips of ../shared/eval. Writes
 * bench/results/transcription-translation-keyterms.json.
 *
 * Translation: chrF (bench/lib/chrf.ts) of Whisper's translate task against English references. The eval set has none,
 * so the references below are written for this bench from the clips' known transcripts (one reference each).
 *
 * Key terms: each clip with names or jargon gets the terms of its transcript; most are words Whisper base gets wrong
 * without help (transcription.json utterances), a few it gets right (controls: a term must not break what was right).
 * Runs: without terms; with the clip's own terms; with the terms of every clip in the clip's language as one list (a
 * user's vocabulary: the other clips' terms are distractors, nothing may be snapped to them and they must not be
 * reported); and, as a stress test, with all 17 terms in 7 languages given to every clip. The snap pass alone is also
 * scored on the run without terms. The snapping rules (keyterms.ts snapRules) were set before this run and are not
 * tuned on it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import type { Transcript } from '../src/operations/transcribe/formats.js';
import { findKeyterms, snapKeyterms, snapRules } from '../src/operations/transcribe/keyterms.js';
import { transcribeFile } from '../src/operations/transcribe/pipeline.js';
import { packageRoot } from '../src/core/version.js';
import { chrf, chrfScore, chrfStatistics } from './lib/chrf.js';
import { errorRate } from './lib/wer.js';

const evalDir = path.resolve(process.env.VOXD_SHARED_DIR ?? path.join(packageRoot, '..', 'shared'), 'eval');
const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  asr: Array<{ id: string; audio: string; language: string; transcript: string }>;
};

/** English references for the non-English clips, translated from their transcripts for this bench. */
const englishReferences: Record<string, string> = {
  'pv_leopard/test_es': 'The sands are whitish, of medium grain, and have very little attendance.',
  'pv_leopard/test_de': 'The room behind this portal was used as a mortuary.',
  'pv_leopard/test_fr': 'Under the Consulate he became curator of waters and forests and general councillor.',
  'pv_leopard/test_it': 'Also on the radio, some of his songs, or rather rhythms, were born.',
  'pv_leopard/test_ja': 'This is how judgmental knowledge of objective reality is established.',
  'pv_leopard/test_ko': 'He walked along one side of the road, dodging this way and that.',
  'pv_leopard/test_pt': 'An old fox cannot learn any trade.',
  'firered/BAC009S0764W0121': 'There were even situations where trading almost came to a standstill.',
  'firered/IT0011W0001': 'Change to another song.',
  'firered/TEST_NET_Y0000000000_-KTKHdZ2fb8_S00000': "Sometimes I can't say it clearly, you know?",
  'firered/TEST_MEETING_T0000000001_S00000':
    "OK, first let's talk about the sales problem the manager just finished with, then about our mall's problems. First, our mall's first half of the year, first each department reports, that is, the results.",
  'deepspeech/ru': 'Poor guy, guys, it should have been me in his place.',
  'julius_segkit/sample': 'The weather is nice today.',
};

/** Key terms per clip: words of the transcript; `control` ones Whisper base already gets right. */
const clipKeyterms: Record<string, { terms: string[]; control?: true }> = {
  'pv_leopard/test_it': { terms: ['nacquero', 'alcune'] },
  'pv_leopard/test_ko': { terms: ['이리저리'] },
  'firered/BAC009S0764W0121': { terms: ['停滞'] },
  'firered/TEST_MEETING_T0000000001_S00000': { terms: ['销售', '商场', '业绩', '汇报', '各部门'] },
  'deepspeech/LDC93S1': { terms: ['wash water'] },
  'deepspeech/ru': { terms: ['бедняга'] },
  'pv_leopard/test': { terms: ['Quilter'], control: true },
  'pv_leopard/test_de': { terms: ['Leichenhalle'], control: true },
  'pv_leopard/test_fr': { terms: ['conseiller général'], control: true },
  'whisper_cpp/jfk': { terms: ['Americans'], control: true },
  'faster_whisper/stereo_diarization_left': { terms: ['wizard'], control: true },
  'deepspeech/arctic_a0024': { terms: ['chiefly induced'], control: true },
};
const allKeyterms = Object.values(clipKeyterms).flatMap((k) => k.terms);
const languageOf = new Map(manifest.asr.map((e) => [e.id, e.language]));
const languageKeyterms = (language: string): string[] =>
  Object.entries(clipKeyterms)
    .filter(([id]) => languageOf.get(id) === language)
    .flatMap(([, k]) => k.terms);

const config = loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent', VOXD_DATA_DIR: path.join(tmpdir(), 'voxd-bench') });
const container = await createContainer(config);
const [transcriber, vad] = await Promise.all([container.asr.get(), container.vad.get()]);
const round = (v: number, digits = 4): number => Math.round(v * 10 ** digits) / 10 ** digits;
const cpuStart = process.cpuUsage();

const run = (audio: string, language: string, options: { task?: 'translate'; keyterms?: string[] } = {}): Promise<Transcript> =>
  transcribeFile({ transcriber, vad }, { path: path.join(evalDir, audio), language, speakers: {}, maxAudioSeconds: 600, ...options });

// Translation.
const translations = [];
for (const entry of manifest.asr.filter((e) => englishReferences[e.id] !== undefined)) {
  const transcript = await run(entry.audio, entry.language, { task: 'translate' });
  translations.push({ id: entry.id, language: entry.language, reference: englishReferences[entry.id]!, hypothesis: transcript.text });
  process.stderr.write(`translate ${entry.id}: ${transcript.text}\n`);
}
const translation = {
  metric: 'chrF (character 6-grams, beta 2, case kept, whitespace removed; sacrebleu defaults)',
  references: "written for this bench from the clips' transcripts (the eval set has no English translations)",
  source_language: 'given',
  corpus_chrf: round(chrfScore(translations.map((t) => chrfStatistics(t.reference, t.hypothesis))), 2),
  clips: translations.map((t) => ({ ...t, chrf: round(chrf(t.reference, t.hypothesis), 2) })),
};

// Key terms.
const inReference = (term: string, transcript: string): boolean =>
  transcript.toLowerCase().replace(/\s+/g, '').includes(term.toLowerCase().replace(/\s+/g, ''));
const rows: Array<
  Record<string, unknown> & {
    keyterms: string[];
    control: boolean;
    error_without: number;
    error_snap_only: number;
    error_with_own: number;
    error_with_all: number;
    error_with_language_list: number;
    found_with_language_list: string[];
    false_finds_with_language_list: string[];
    found_without: string[];
    found_snap_only: string[];
    found_with_own: string[];
    found_with_all: string[];
    false_finds_with_all: string[];
  }
> = [];
for (const entry of manifest.asr) {
  const own = clipKeyterms[entry.id]?.terms ?? [];
  const plain = await run(entry.audio, entry.language);
  const withOwn = own.length > 0 ? await run(entry.audio, entry.language, { keyterms: own }) : plain;
  const languageList = languageKeyterms(entry.language);
  const withLanguageList =
    languageList.length === own.length ? withOwn : await run(entry.audio, entry.language, { keyterms: languageList });
  const withAll = await run(entry.audio, entry.language, { keyterms: allKeyterms });
  const snapOnly = snapKeyterms(plain.segments, own, entry.language);
  const found = (t: Pick<Transcript, 'segments'>, terms: string[]): string[] => findKeyterms(t.segments, terms).map((k) => k.term);
  const error = (text: string) => round(errorRate(entry.transcript, text, entry.language).rate);
  const row = {
    id: entry.id,
    language: entry.language,
    keyterms: own,
    control: clipKeyterms[entry.id]?.control ?? false,
    error_without: error(plain.text),
    error_snap_only: error(snapOnly.map((s) => s.text).join(' ')),
    error_with_own: error(withOwn.text),
    error_with_language_list: error(withLanguageList.text),
    error_with_all: error(withAll.text),
    found_without: found(plain, own),
    found_snap_only: found({ segments: snapOnly }, own),
    found_with_own: withOwn.found_keyterms?.map((k) => k.term) ?? [],
    found_with_language_list: withLanguageList.found_keyterms?.map((k) => k.term) ?? [],
    found_with_all: withAll.found_keyterms?.map((k) => k.term) ?? [],
    false_finds_with_language_list: (withLanguageList.found_keyterms ?? [])
      .map((k) => k.term)
      .filter((term) => !inReference(term, entry.transcript)),
    false_finds_with_all: (withAll.found_keyterms ?? []).map((k) => k.term).filter((term) => !inReference(term, entry.transcript)),
    text_without: plain.text,
    text_with_own: withOwn.text,
    text_with_language_list: withLanguageList.text,
    text_with_all: withAll.text,
  };
  rows.push(row);
  process.stderr.write(
    `keyterms ${entry.id}: ${JSON.stringify({ own, without: row.text_without, withOwn: row.text_with_own, withLanguageList: row.text_with_language_list, withAll: row.text_with_all })}\n`,
  );
}
const termRows = rows.filter((r) => r.keyterms.length > 0);
const recall = (pick: (r: (typeof rows)[number]) => string[], filter: (r: (typeof rows)[number]) => boolean = () => true): number => {
  const selected = termRows.filter(filter);
  return round(
    selected.reduce((n, r) => n + pick(r).filter((t) => r.keyterms.includes(t)).length, 0) /
      selected.reduce((n, r) => n + r.keyterms.length, 0),
  );
};
const meanError = (list: typeof rows, pick: (r: (typeof rows)[number]) => number): number =>
  round(list.reduce((n, r) => n + pick(r), 0) / list.length);
const rest = rows.filter((r) => r.keyterms.length === 0);
const cpu = process.cpuUsage(cpuStart);
const results = {
  model: transcriber.modelId,
  engine: transcriber.engine,
  measured_at: new Date().toISOString(),
  load_average_1min: round(loadavg()[0]!, 2),
  cpu_seconds: round((cpu.user + cpu.system) / 1e6, 1),
  translation,
  keyterms: {
    snap_rules: snapRules,
    terms_in_all_list: allKeyterms.length,
    term_recall: {
      without: recall((r) => r.found_without),
      snap_only: recall((r) => r.found_snap_only),
      with_own: recall((r) => r.found_with_own),
      with_language_list: recall((r) => r.found_with_language_list),
      with_all: recall((r) => r.found_with_all),
      missed_by_base_without: recall(
        (r) => r.found_without,
        (r) => !r.control,
      ),
      missed_by_base_with_own: recall(
        (r) => r.found_with_own,
        (r) => !r.control,
      ),
      missed_by_base_with_language_list: recall(
        (r) => r.found_with_language_list,
        (r) => !r.control,
      ),
      missed_by_base_with_all: recall(
        (r) => r.found_with_all,
        (r) => !r.control,
      ),
      controls_without: recall(
        (r) => r.found_without,
        (r) => r.control,
      ),
      controls_with_own: recall(
        (r) => r.found_with_own,
        (r) => r.control,
      ),
      controls_with_language_list: recall(
        (r) => r.found_with_language_list,
        (r) => r.control,
      ),
      controls_with_all: recall(
        (r) => r.found_with_all,
        (r) => r.control,
      ),
    },
    language_lists: Object.fromEntries(
      [...new Set(manifest.asr.map((e) => e.language))]
        .map((l) => [l, languageKeyterms(l)] as const)
        .filter(([, terms]) => terms.length > 0),
    ),
    false_finds_with_language_list: rows.reduce((n, r) => n + r.false_finds_with_language_list.length, 0),
    false_finds_with_all: rows.reduce((n, r) => n + r.false_finds_with_all.length, 0),
    mean_error_clips_with_terms: {
      metric: 'WER, CER for zh/ja/ko',
      without: meanError(termRows, (r) => r.error_without),
      snap_only: meanError(termRows, (r) => r.error_snap_only),
      with_own: meanError(termRows, (r) => r.error_with_own),
      with_language_list: meanError(termRows, (r) => r.error_with_language_list),
      with_all: meanError(termRows, (r) => r.error_with_all),
    },
    mean_error_other_clips: {
      clips: rest.length,
      without: meanError(rest, (r) => r.error_without),
      with_language_list: meanError(rest, (r) => r.error_with_language_list),
      with_all: meanError(rest, (r) => r.error_with_all),
    },
    clips: rows,
  },
};
writeFileSync(path.join(packageRoot, 'bench/results/transcription-translation-keyterms.json'), `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write(
  `${JSON.stringify({ translation: { corpus_chrf: translation.corpus_chrf }, ...results.keyterms, clips: undefined }, null, 2)}\n`,
);
await container.close();

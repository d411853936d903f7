/**
 * Long English files that repeat themselves (issue 35, point 4): voxd against a reference on the same Whisper base
 * weights, side by side in one run. Each file is ~3 minutes of eval clips with 0.5 s of silence after each, in one of four
 * patterns: three clips said in turn (narration and a telephone conversation, as the issue's file), one clip over and
 * over, two clips alternating, and a long stretch said once followed by one clip repeated; the tuning part also has the
 * last two with a quiet clip (as the held-out LDC93S1 is).
 * The set is split before any tuning: `tuning` files are built from pv_leopard/test, arctic_a0024,
 * stereo_diarization_right and the pyannote telephone sample; `held-out` files from LDC93S1, stereo_diarization_left,
 * JFK and the six English utterances said once; no clip is in both (the held-out long stretch holds the tuning clips too,
 * but said once).
 * Per file: WER of voxd and of the reference, and stretches of detected speech (Silero VAD, at least 1 s, split at 0.3 s
 * pauses) that no word of the transcript touches.
 * The reference is faster-whisper, never a dependency: `--python PATH` (a venv's python with faster-whisper installed) and
 * `--reference-model DIR` (the CTranslate2 directory of the same weights, see ../shared/notes/whisper-weights.md); int8,
 * beam 5, word timestamps, its Silero VAD on, as bench/asr-side-by-side.ts. Without them only voxd is measured.
 * `--only NAME` runs one file. Results: bench/results/long-files.json.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { decodeFile } from '../src/audio/decode.js';
import { speechSegments, type SpeechSegment } from '../src/audio/vad.js';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { packageRoot } from '../src/core/version.js';
import { transcribeFile } from '../src/operations/transcribe/pipeline.js';
import { errorRate } from './lib/wer.js';

const { values: args } = parseArgs({
  options: { python: { type: 'string' }, 'reference-model': { type: 'string' }, only: { type: 'string' } },
});
const evalDir = path.resolve(process.env.VOXD_SHARED_DIR ?? path.join(packageRoot, '..', 'shared'), 'eval');
const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  asr: Array<{ id: string; audio: string; language: string; transcript: string; duration_s: number }>;
};
const round = (v: number, digits = 4): number => Math.round(v * 10 ** digits) / 10 ** digits;
const gapSeconds = 0.5;
const targetSeconds = 180;

interface Clip {
  id: string;
  audio: string;
  transcript: string;
  seconds: number;
  /** Gain applied when the file is built (a quiet speaker among louder ones). */
  gainDb?: number;
}

const clip = (id: string): Clip => {
  const entry = manifest.asr.find((e) => e.id === id)!;
  return { id, audio: path.join(evalDir, entry.audio), transcript: entry.transcript, seconds: entry.duration_s };
};
const stm = readFileSync(path.join(evalDir, 'diar/pyannote/sample.stm'), 'utf8').trim().split('\n');
const telephone: Clip = {
  id: 'pyannote/sample',
  audio: path.join(evalDir, 'diar/pyannote/sample.wav'),
  transcript: stm.map((line) => line.split(/\s+/).slice(5).join(' ')).join(' '),
  seconds: 30,
};

/** `head` once, then `cycle` over and over until the file reaches targetSeconds. */
function pattern(head: Clip[], cycle: Clip[]): Clip[] {
  const parts = [...head];
  let seconds = head.reduce((sum, c) => sum + c.seconds + gapSeconds, 0);
  for (let i = 0; seconds < targetSeconds; i++) {
    const next = cycle[i % cycle.length]!;
    parts.push(next);
    seconds += next.seconds + gapSeconds;
  }
  return parts;
}

const leopard = clip('pv_leopard/test');
const arctic = clip('deepspeech/arctic_a0024');
const horizon = clip('faster_whisper/stereo_diarization_right');
const ldc = clip('deepspeech/LDC93S1');
const wizard = clip('faster_whisper/stereo_diarization_left');
const jfk = clip('whisper_cpp/jfk');
const english = manifest.asr.filter((e) => e.language === 'en').map((e) => clip(e.id));
/**
 * arctic_a0024 brought to LDC93S1's level (mean -41 dB, 24 dB under JFK), which whisper base passes over between louder
 * sentences: the held-out files hold LDC93S1 itself, so the tuning files get a quiet clip of their own.
 */
const quietArctic: Clip = { ...arctic, id: `${arctic.id} (-22 dB)`, gainDb: -22 };

const files: Array<{ name: string; part: 'tuning' | 'held-out'; parts: Clip[] }> = [
  { name: 'three in turn (narration, telephone)', part: 'tuning', parts: pattern([], [leopard, arctic, telephone]) },
  { name: 'one clip over and over', part: 'tuning', parts: pattern([], [arctic]) },
  { name: 'two clips alternating', part: 'tuning', parts: pattern([], [leopard, horizon]) },
  { name: 'long telephone stretch, then one clip', part: 'tuning', parts: pattern([telephone], [horizon]) },
  { name: 'two clips alternating, one of them quiet', part: 'tuning', parts: pattern([], [leopard, quietArctic]) },
  { name: 'long telephone stretch, then one quiet clip', part: 'tuning', parts: pattern([telephone], [quietArctic]) },
  { name: 'three in turn', part: 'held-out', parts: pattern([], [ldc, wizard, jfk]) },
  { name: 'one clip over and over', part: 'held-out', parts: pattern([], [wizard]) },
  { name: 'two clips alternating', part: 'held-out', parts: pattern([], [jfk, ldc]) },
  { name: 'English utterances once, then one clip', part: 'held-out', parts: pattern(english, [ldc]) },
];

function build(name: string, parts: Clip[]): string {
  const target = path.join(tmpdir(), `voxd-long-files-${name.replace(/[^a-z0-9]+/gi, '-')}.wav`);
  const inputs = parts.flatMap((p) => ['-i', p.audio]);
  const padded = parts
    .map((p, i) => `[${i}:a]aformat=sample_rates=16000:channel_layouts=mono,volume=${p.gainDb ?? 0}dB,apad=pad_dur=${gapSeconds}[a${i}]`)
    .join(';');
  const filter = `${padded};${parts.map((_, i) => `[a${i}]`).join('')}concat=n=${parts.length}:v=0:a=1[out]`;
  execFileSync('ffmpeg', ['-v', 'error', '-y', ...inputs, '-filter_complex', filter, '-map', '[out]', target]);
  return target;
}

interface TimedWord {
  start: number;
  end: number;
}

/** Stretches of detected speech (at least 1 s) that no word overlaps. */
function speechWithoutWords(speech: SpeechSegment[], words: TimedWord[]): Array<[number, number]> {
  return speech
    .filter((s) => s.endSeconds - s.startSeconds >= 1 && !words.some((w) => w.start < s.endSeconds && w.end > s.startSeconds))
    .map((s) => [round(s.startSeconds, 2), round(s.endSeconds, 2)]);
}

const referenceScript = `
import json, sys
from faster_whisper import WhisperModel
model = WhisperModel(sys.argv[1], device='cpu', compute_type='int8', cpu_threads=2)
segments, _ = model.transcribe(sys.argv[2], language='en', beam_size=5, word_timestamps=True, vad_filter=True)
segments = list(segments)
print(json.dumps({'text': ' '.join(s.text.strip() for s in segments), 'words': [{'start': w.start, 'end': w.end} for s in segments for w in s.words]}))
`;

/**
 * The reference's transcript, kept beside the file by the file's hash: the reference does not change between runs that
 * tune voxd, and it takes as long as voxd.
 */
function referenceTranscript(python: string, model: string, file: string): { text: string; words: TimedWord[] } {
  const hash = createHash('sha256').update(readFileSync(file)).update(model).digest('hex').slice(0, 16);
  const cached = path.join(tmpdir(), `voxd-long-files-reference-${hash}.json`);
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, 'utf8')) as { text: string; words: TimedWord[] };
  const output = execFileSync(python, ['-c', referenceScript, model, file], { encoding: 'utf8', maxBuffer: 1 << 26 });
  writeFileSync(cached, output.trim().split('\n').at(-1)!);
  return JSON.parse(readFileSync(cached, 'utf8')) as { text: string; words: TimedWord[] };
}

/** Written after each file, so a run stopped part way keeps what it measured. */
function writeResults(): void {
  const summary = (part: string) => {
    const chosen = rows.filter((r) => r.part === part);
    return {
      files: chosen.length,
      worst_wer_above_reference: chosen.some((r) => r.wer_above_reference === undefined)
        ? null
        : round(Math.max(...chosen.map((r) => r.wer_above_reference as number))),
      files_with_speech_without_words: chosen.filter((r) => (r.voxd as { speech_without_words: unknown[] }).speech_without_words.length > 0)
        .length,
    };
  };
  writeFileSync(
    path.join(packageRoot, 'bench/results/long-files.json'),
    `${JSON.stringify(
      {
        model: config.asrModel,
        threads: config.inferenceThreads,
        reference: args.python ? 'faster-whisper, int8, beam 5, its VAD' : null,
        measured_at: new Date().toISOString(),
        held_out: summary('held-out'),
        tuning: summary('tuning'),
        files: rows,
      },
      null,
      2,
    )}\n`,
  );
}

const config = loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent', VOXD_DATA_DIR: path.join(tmpdir(), 'voxd-bench') });
const container = await createContainer(config);
const [transcriber, vad] = await Promise.all([container.asr.get(), container.vad.get()]);
const rows: Array<Record<string, unknown>> = [];
// Held-out files first: a run stopped part way has measured those.
for (const { name, part, parts } of [...files].sort((a, b) => Number(a.part === 'tuning') - Number(b.part === 'tuning'))) {
  if (args.only && !`${part}: ${name}`.includes(args.only)) continue;
  const file = build(`${part}-${name}`, parts);
  const reference = parts.map((p) => p.transcript).join(' ');
  const { samples } = await decodeFile(file, { sampleRate: 16000, channels: 1 });
  const speech = speechSegments(await vad.probabilities(samples), samples.length / 16000, { minSilenceSeconds: 0.3 });

  const cpuBefore = process.cpuUsage();
  const transcript = await transcribeFile({ transcriber, vad }, { path: file, language: 'en', speakers: {}, maxAudioSeconds: 86400 });
  const cpu = process.cpuUsage(cpuBefore);
  const voxdRate = errorRate(reference, transcript.text, 'en');
  const voxdWords = transcript.segments.flatMap((s) => s.words);
  const row: Record<string, unknown> = {
    part,
    name,
    clips: parts.map((p) => p.id),
    audio_seconds: round(transcript.duration, 1),
    reference_words: voxdRate.referenceLength,
    voxd: {
      wer: round(voxdRate.rate),
      words: transcript.text.split(/\s+/).filter(Boolean).length,
      cpu_seconds: round((cpu.user + cpu.system) / 1e6, 1),
      speech_without_words: speechWithoutWords(speech, voxdWords),
      text: transcript.text,
    },
  };
  if (args.python && args['reference-model']) {
    const result = referenceTranscript(args.python, args['reference-model'], file);
    const rate = errorRate(reference, result.text, 'en');
    row.faster_whisper = {
      wer: round(rate.rate),
      words: result.text.split(/\s+/).filter(Boolean).length,
      speech_without_words: speechWithoutWords(speech, result.words),
      text: result.text,
    };
    row.wer_above_reference = round(voxdRate.rate - rate.rate);
  }
  rows.push(row);
  if (!args.only) writeResults();
  const { text: _voxdText, ...voxdFigures } = row.voxd as Record<string, unknown>;
  const reference_ = row.faster_whisper as Record<string, unknown> | undefined;
  process.stdout.write(
    `${part}: ${name}: voxd ${JSON.stringify(voxdFigures)}${reference_ ? ` faster-whisper wer=${reference_.wer} words=${reference_.words} gaps=${JSON.stringify(reference_.speech_without_words)}` : ''}\n`,
  );
}
await container.close();

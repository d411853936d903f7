/**
 * voxd's transcription against faster-whisper on the same Whisper base weights, run by hand (issue 21). Whole processes,
 * runs alternated (voxd, faster-whisper, voxd, ...), medians of BENCH_ROUNDS (default 3): CPU seconds (user + system of
 * the process, by GNU time) and wall seconds, and WER of both against the known transcript.
 * Inputs, built from ../shared/eval: the six English eval utterances (0.5 s apart) repeated to 10 minutes, the same six once
 * with the pyannote telephone sample (nothing repeated), whisper.cpp's 11 s JFK clip, and the first second of LDC93S1.
 * voxd runs its CLI (`voxd transcribe FILE --language en --format text`: process start and model loads included) and, for
 * the two clips, the pipeline of a running server (model loaded; CPU of the call alone).
 * faster-whisper is a reference tool, never a dependency: FASTER_WHISPER_PYTHON is the python of a venv with
 * faster-whisper installed, FASTER_WHISPER_MODEL a CTranslate2 directory of the same weights (see
 * ../shared/notes/whisper-weights.md); int8, beam 5, word timestamps, its Silero VAD on. Without them only voxd is measured.
 * Results: `side_by_side` in bench/results/transcription.json, per voxd model and encoder (VOXD_ASR_MODEL and
 * VOXD_ASR_ENCODER pick them as usual).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { transcribeFile } from '../src/operations/transcribe/pipeline.js';
import { packageRoot } from '../src/core/version.js';
import { errorRate } from './lib/wer.js';

const evalDir = path.resolve(process.env.VOXD_SHARED_DIR ?? path.join(packageRoot, '..', 'shared'), 'eval');
const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  asr: Array<{ id: string; audio: string; language: string; transcript: string; duration_s: number }>;
};
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const fasterWhisperPython = process.env.FASTER_WHISPER_PYTHON;
const fasterWhisperModel = process.env.FASTER_WHISPER_MODEL;
const round = (v: number, digits = 3): number => Math.round(v * 10 ** digits) / 10 ** digits;
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

interface Input {
  name: string;
  file: string;
  transcript?: string;
}

function concatenate(name: string, parts: Array<{ audio: string }>, seconds?: number): string {
  const target = path.join(tmpdir(), `voxd-side-by-side-${name}.wav`);
  const inputs = parts.flatMap((p) => ['-i', p.audio]);
  const padded = parts.map((_, i) => `[${i}:a]aformat=sample_rates=16000:channel_layouts=mono,apad=pad_dur=0.5[a${i}]`).join(';');
  const filter = `${padded};${parts.map((_, i) => `[a${i}]`).join('')}concat=n=${parts.length}:v=0:a=1[out]`;
  execFileSync('ffmpeg', [
    '-v',
    'error',
    '-y',
    ...inputs,
    '-filter_complex',
    filter,
    '-map',
    '[out]',
    ...(seconds ? ['-t', String(seconds)] : []),
    target,
  ]);
  return target;
}

function inputs(): Input[] {
  const english = manifest.asr
    .filter((e) => e.language === 'en')
    .map((e) => ({ audio: path.join(evalDir, e.audio), transcript: e.transcript, seconds: e.duration_s }));
  const roundSeconds = english.reduce((sum, e) => sum + e.seconds + 0.5, 0);
  const repeats = Math.floor(600 / roundSeconds);
  const long = Array.from({ length: repeats }, () => english).flat();
  const stm = readFileSync(path.join(evalDir, 'diar/pyannote/sample.stm'), 'utf8').trim().split('\n');
  const telephone = {
    audio: path.join(evalDir, 'diar/pyannote/sample.wav'),
    transcript: stm.map((line) => line.split(/\s+/).slice(5).join(' ')).join(' '),
  };
  const jfk = english.find((e) => e.audio.endsWith('jfk.wav'))!;
  const ldc = english.find((e) => e.audio.endsWith('LDC93S1.wav'))!;
  const oneSecond = path.join(tmpdir(), 'voxd-side-by-side-1s.wav');
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', ldc.audio, '-t', '1', '-ac', '1', '-ar', '16000', oneSecond]);
  return [
    {
      name: `${Math.round((repeats * roundSeconds) / 60)} min, repeated utterances`,
      file: concatenate('long', long),
      transcript: long.map((p) => p.transcript).join(' '),
    },
    {
      name: 'not repeated (67 s)',
      file: concatenate('not-repeated', [...english, telephone]),
      transcript: [...english, telephone].map((p) => p.transcript).join(' '),
    },
    { name: '11 s clip (JFK)', file: jfk.audio, transcript: jfk.transcript },
    { name: '1 s clip (LDC93S1, first second)', file: oneSecond },
  ];
}

/** CPU and wall seconds of a whole process (GNU time), and what it printed. */
function timed(command: string, args: string[]): { cpuSeconds: number; wallSeconds: number; stdout: string } {
  const child = spawnSync('/usr/bin/time', ['-f', 'voxd-bench-time %U %S %e', command, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const line = child.stderr.split('\n').find((l) => l.startsWith('voxd-bench-time'));
  if (child.status !== 0 || !line) throw new Error(`${command} failed: ${child.stderr.slice(-2000)}`);
  const [user, system, wall] = line.split(' ').slice(1).map(Number) as [number, number, number];
  return { cpuSeconds: user + system, wallSeconds: wall, stdout: child.stdout };
}

const voxdCli = (file: string) =>
  timed(process.execPath, [path.join(packageRoot, 'dist/src/cli/main.js'), 'transcribe', file, '--language', 'en', '--format', 'text']);

const fasterWhisperScript = `
import sys
from faster_whisper import WhisperModel
model = WhisperModel(sys.argv[1], device='cpu', compute_type='int8', cpu_threads=int(sys.argv[3]))
segments, _ = model.transcribe(sys.argv[2], language='en', beam_size=5, word_timestamps=True, vad_filter=True)
print(' '.join(s.text.strip() for s in segments))
`;
const fasterWhisper = (file: string, threads: number) =>
  timed(fasterWhisperPython!, ['-c', fasterWhisperScript, fasterWhisperModel!, file, String(threads)]);

const config = loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent', VOXD_DATA_DIR: path.join(tmpdir(), 'voxd-bench') });
const rows: Array<Record<string, unknown>> = [];
for (const input of inputs()) {
  const voxd: Array<ReturnType<typeof timed>> = [];
  const reference: Array<ReturnType<typeof timed>> = [];
  for (let i = 0; i < rounds; i++) {
    voxd.push(voxdCli(input.file));
    if (fasterWhisperPython && fasterWhisperModel) reference.push(fasterWhisper(input.file, config.inferenceThreads));
  }
  const summary = (runs: Array<ReturnType<typeof timed>>) =>
    runs.length === 0
      ? undefined
      : {
          cpu_seconds: round(median(runs.map((r) => r.cpuSeconds)), 2),
          wall_seconds: round(median(runs.map((r) => r.wallSeconds)), 2),
          ...(input.transcript ? { wer: round(errorRate(input.transcript, runs.at(-1)!.stdout, 'en').rate, 4) } : {}),
        };
  const voxdSummary = summary(voxd)!;
  const referenceSummary = summary(reference);
  const row: Record<string, unknown> = {
    input: input.name,
    voxd_cli: voxdSummary,
    ...(referenceSummary
      ? {
          faster_whisper_int8: referenceSummary,
          cpu_ratio: round(voxdSummary.cpu_seconds / referenceSummary.cpu_seconds),
          wall_ratio: round(voxdSummary.wall_seconds / referenceSummary.wall_seconds),
        }
      : {}),
  };
  rows.push(row);
  process.stdout.write(`${JSON.stringify(row)}\n`);
}

// The two clips in a running server: the model is loaded once, then each call is measured alone.
const container = await createContainer(config);
const [transcriber, vad] = await Promise.all([container.asr.get(), container.vad.get()]);
for (const input of inputs().slice(2)) {
  const cpu: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const before = process.cpuUsage();
    await transcribeFile({ transcriber, vad }, { path: input.file, language: 'en', speakers: {}, maxAudioSeconds: 600 });
    const used = process.cpuUsage(before);
    cpu.push((used.user + used.system) / 1e6);
  }
  const row = { input: input.name, voxd_server_cpu_seconds: round(median(cpu), 2) };
  rows.push(row);
  process.stdout.write(`${JSON.stringify(row)}\n`);
}
await container.close();

const resultsPath = path.join(packageRoot, 'bench/results/transcription.json');
const previous = JSON.parse(readFileSync(resultsPath, 'utf8')) as Record<string, unknown>;
// One entry per voxd model and encoder, so runs with VOXD_ASR_MODEL=whisper-base-q8_0 or VOXD_ASR_ENCODER=onnx-int8 and
// the default sit side by side.
const entry = config.asrEncoder === 'onnx' ? config.asrModel : `${config.asrModel} (${config.asrEncoder} encoder)`;
const sideBySide = {
  ...(previous.side_by_side as Record<string, unknown> | undefined),
  [entry]: {
    measured_at: new Date().toISOString(),
    threads: config.inferenceThreads,
    rounds,
    load_average_1min: round(loadavg()[0]!, 2),
    rows,
  },
};
writeFileSync(resultsPath, `${JSON.stringify({ ...previous, side_by_side: sideBySide }, null, 2)}\n`);

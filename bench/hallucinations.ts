/**
 * No words that were not said (issue 38, point 7): 60 s of silence, music, sound effects, room noise and generated noise
 * through the transcription pipeline (Silero VAD gate, then Whisper), counting the words it emits; and English speech with
 * long stretches of music and room noise between the sentences, whose WER shows whether a gate loses real words.
 * Inputs are built first, from ../shared/eval's separation stems (music, sfx of dnr_mix01..03) and ffmpeg's noise
 * generators, and split: mix01's stems, white noise, digital silence and one speech input are for tuning; everything else
 * is held out and reported first.
 * Run: nice -n 10 node --import tsx bench/hallucinations.ts [--subset]   Writes bench/results/hallucinations.json.
 * --subset: the held-out non-speech inputs and one speech input only (a loaded machine).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { encodeWaveformToFile } from '../src/audio/encode.js';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { packageRoot } from '../src/core/version.js';
import { transcribeFile } from '../src/operations/transcribe/pipeline.js';
import { errorRate } from './lib/wer.js';

const evalDir = path.resolve(process.env.VOXD_SHARED_DIR ?? path.join(packageRoot, '..', 'shared'), 'eval');
const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  asr: Array<{ id: string; audio: string; language: string; transcript: string; duration_s: number }>;
};
const workDir = path.join(tmpdir(), 'voxd-bench-hallucinations');
mkdirSync(workDir, { recursive: true });
const sampleRate = 16000;
const seconds = 60;
const subset = process.argv.includes('--subset');

/** Mono 16 kHz float samples of whatever ffmpeg makes of `input` (a file or a lavfi source), `durationSeconds` long. */
function pcm(input: string[], durationSeconds: number, gainDb = 0): Float32Array {
  const out = execFileSync(
    'ffmpeg',
    [
      '-v',
      'error',
      ...input,
      '-t',
      String(durationSeconds),
      '-af',
      `volume=${gainDb}dB`,
      '-ac',
      '1',
      '-ar',
      String(sampleRate),
      '-f',
      'f32le',
      'pipe:1',
    ],
    { maxBuffer: 1 << 30 },
  );
  return new Float32Array(out.buffer, out.byteOffset, out.byteLength / 4);
}
const looped = (file: string) => ['-stream_loop', '-1', '-i', path.join(evalDir, file)];
const lavfi = (source: string) => ['-f', 'lavfi', '-i', source];
const mix = (...parts: Float32Array[]): Float32Array => {
  const out = new Float32Array(Math.max(...parts.map((p) => p.length)));
  for (const p of parts) for (let i = 0; i < p.length; i++) out[i]! += p[i]!;
  return out;
};
const concat = (...parts: Float32Array[]): Float32Array => {
  const out = new Float32Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

type Split = 'tuning' | 'held-out';
interface Input {
  id: string;
  split: Split;
  kind: 'silence' | 'music' | 'sfx' | 'room' | 'noise' | 'speech';
  samples: () => Float32Array;
  transcript?: string;
}

const room = (sfx: string) => mix(pcm(lavfi('anoisesrc=color=brown:amplitude=0.02'), seconds), pcm(looped(sfx), seconds, -20));
const nonSpeech: Input[] = [
  { id: 'silence-digital', split: 'tuning', kind: 'silence', samples: () => new Float32Array(sampleRate * seconds) },
  { id: 'noise-white-30dB', split: 'tuning', kind: 'noise', samples: () => pcm(lavfi('anoisesrc=color=white:amplitude=0.03'), seconds) },
  { id: 'music-mix01', split: 'tuning', kind: 'music', samples: () => pcm(looped('sep/dnr_mix01/music.wav'), seconds) },
  { id: 'sfx-mix01', split: 'tuning', kind: 'sfx', samples: () => pcm(looped('sep/dnr_mix01/sfx.wav'), seconds) },
  { id: 'room-mix01', split: 'tuning', kind: 'room', samples: () => room('sep/dnr_mix01/sfx.wav') },
  {
    id: 'silence-dither',
    split: 'held-out',
    kind: 'silence',
    samples: () => pcm(lavfi('anoisesrc=color=white:amplitude=0.0003'), seconds),
  },
  { id: 'noise-pink-30dB', split: 'held-out', kind: 'noise', samples: () => pcm(lavfi('anoisesrc=color=pink:amplitude=0.03'), seconds) },
  { id: 'noise-brown-20dB', split: 'held-out', kind: 'noise', samples: () => pcm(lavfi('anoisesrc=color=brown:amplitude=0.1'), seconds) },
  { id: 'music-mix02', split: 'held-out', kind: 'music', samples: () => pcm(looped('sep/dnr_mix02/music.wav'), seconds) },
  { id: 'music-mix03', split: 'held-out', kind: 'music', samples: () => pcm(looped('sep/dnr_mix03/music.wav'), seconds) },
  { id: 'sfx-mix02', split: 'held-out', kind: 'sfx', samples: () => pcm(looped('sep/dnr_mix02/sfx.wav'), seconds) },
  { id: 'sfx-mix03', split: 'held-out', kind: 'sfx', samples: () => pcm(looped('sep/dnr_mix03/sfx.wav'), seconds) },
  { id: 'room-mix03', split: 'held-out', kind: 'room', samples: () => room('sep/dnr_mix03/sfx.wav') },
];

/** Two English clips with 20 s of music (under them, -25 dB) and 20 s of room noise between and after them. */
const english = manifest.asr.filter((e) => e.language === 'en' && e.duration_s < 20);
const speechInput = (index: number, split: Split, stems: string): Input => {
  const a = english[(2 * index) % english.length]!;
  const b = english[(2 * index + 1) % english.length]!;
  return {
    id: `speech-gaps-${a.id}+${b.id}`,
    split,
    kind: 'speech',
    transcript: `${a.transcript} ${b.transcript}`,
    samples: () =>
      concat(
        pcm(lavfi('anoisesrc=color=brown:amplitude=0.005'), 2),
        pcm(['-i', path.join(evalDir, a.audio)], a.duration_s),
        pcm(looped(`sep/${stems}/music.wav`), 20, -25),
        pcm(['-i', path.join(evalDir, b.audio)], b.duration_s),
        room(`sep/${stems}/sfx.wav`).subarray(0, 20 * sampleRate),
      ),
  };
};
const speechInputs = [
  speechInput(0, 'tuning', 'dnr_mix01'),
  speechInput(1, 'held-out', 'dnr_mix02'),
  speechInput(2, 'held-out', 'dnr_mix03'),
];

const inputs = subset
  ? [...nonSpeech.filter((i) => i.split === 'held-out'), speechInputs[1]!]
  : [...nonSpeech, ...speechInputs].sort((x, y) => (x.split === y.split ? 0 : x.split === 'held-out' ? -1 : 1));

const config = loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent', VOXD_DATA_DIR: path.join(tmpdir(), 'voxd-bench') });
const container = await createContainer(config);
const [transcriber, vad] = await Promise.all([container.asr.get(), container.vad.get()]);

interface Row {
  id: string;
  split: Split;
  kind: Input['kind'];
  words: number;
  text: string;
  wer?: number;
  seconds: number;
}
const rows: Row[] = [];
for (const input of inputs) {
  const file = path.join(workDir, `${input.id.replaceAll('/', '_')}.wav`);
  await encodeWaveformToFile({ samples: input.samples(), sampleRate, channels: 1 }, { format: 'wav' }, file);
  const started = performance.now();
  const transcript = await transcribeFile({ transcriber, vad }, { path: file, language: 'en', speakers: {}, maxAudioSeconds: 3600 });
  const words = transcript.text.split(/\s+/).filter(Boolean).length;
  const row: Row = {
    id: input.id,
    split: input.split,
    kind: input.kind,
    words,
    text: transcript.text,
    ...(input.transcript ? { wer: Math.round(errorRate(input.transcript, transcript.text, 'en').rate * 1e4) / 1e4 } : {}),
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
  console.log(JSON.stringify(row));
  rows.push(row);
}
await container.close();

const summary = (split: Split) => {
  const of = rows.filter((r) => r.split === split);
  const quiet = of.filter((r) => r.kind !== 'speech');
  const speech = of.filter((r) => r.kind === 'speech');
  return {
    non_speech_inputs: quiet.length,
    non_speech_words: quiet.reduce((s, r) => s + r.words, 0),
    non_speech_inputs_with_words: quiet.filter((r) => r.words > 0).length,
    speech_inputs: speech.length,
    speech_wer: speech.length ? Math.round((speech.reduce((s, r) => s + (r.wer ?? 0), 0) / speech.length) * 1e4) / 1e4 : null,
  };
};
writeFileSync(
  path.join(packageRoot, 'bench', 'results', 'hallucinations.json'),
  `${JSON.stringify(
    {
      generated: new Date().toISOString(),
      asr_model: config.asrModel,
      load_average: loadavg().map((l) => Math.round(l * 100) / 100),
      subset,
      held_out: summary('held-out'),
      tuning: summary('tuning'),
      rows,
    },
    null,
    2,
  )}\n`,
);

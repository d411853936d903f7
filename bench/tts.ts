/**
 * Text-to-speech bench: speed (time to first audio, real-time factor, by wall clock and by CPU time) and per-emotion
 * prosody relative to neutral, for Kokoro and espeak-ng. Writes bench/results/tts.json.
 *
 * Wall-clock numbers depend on what else runs on the machine, so the load average is recorded beside them, and the
 * CPU-time RTF (process CPU seconds per audio second) is reported as the load-independent measure.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { emotions } from '../src/operations/synthesize/emotion.js';
import { EspeakSynthesizer } from '../src/operations/synthesize/engines/espeak.js';
import type { SynthesisRequest, Synthesizer } from '../src/operations/synthesize/synthesizer.js';
import { collect, loadKokoro, measure } from '../test/helpers/tts.js';

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const threads = Number(process.env.VOXD_THREADS ?? 2);

const oneSentence: Array<[string, string]> = [
  ['en-us', 'The library opens at nine in the morning and closes late on Fridays.'],
  ['en-us', 'Please remember to bring your umbrella, because it may rain this afternoon.'],
  ['en-us', 'She finished the report before lunch and sent it to the whole team.'],
  ['es', 'Mañana por la mañana vamos a visitar a mis abuelos en el pueblo.'],
  ['fr', 'Nous avons passé une excellente soirée chez nos amis au bord du lac.'],
  ['it', 'Domani andiamo al mercato per comprare frutta fresca e verdura.'],
  ['pt-br', 'Amanhã vamos visitar os nossos avós que moram no interior.'],
];
const paragraph =
  'Voice technology has changed a great deal over the last decade. Early systems sounded robotic and flat. ' +
  'Modern neural models produce speech that is often hard to tell apart from a human voice. ' +
  'They still need careful text processing, though, because numbers like 1,250 or dates like 2024-03-15 must be read correctly.';
const emotionText = {
  kokoro: { language: 'en-us', voice: 'af_heart', text: 'I never expected to see you here today. What a day it has been!' },
  espeak: { language: 'de', voice: 'espeak-de', text: 'Ich hätte nie gedacht, dich heute hier zu sehen. Was für ein Tag das war!' },
};

interface SpeedSample {
  language: string;
  text: string;
  firstAudioMs: number;
  totalMs: number;
  audioSeconds: number;
  rtf: number;
  cpuRtf: number;
}

async function timed(engine: Synthesizer, request: SynthesisRequest): Promise<Omit<SpeedSample, 'language' | 'text'>> {
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  let firstAudioMs = 0;
  let samples = 0;
  for await (const chunk of engine.synthesize(request)) {
    if (firstAudioMs === 0) firstAudioMs = performance.now() - start;
    samples += chunk.waveform.samples.length;
  }
  const totalMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  const audioSeconds = samples / engine.sampleRate;
  return { firstAudioMs, totalMs, audioSeconds, rtf: totalMs / 1000 / audioSeconds, cpuRtf: (cpu.user + cpu.system) / 1e6 / audioSeconds };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

/** Spectral tilt proxy: energy of the first difference relative to the signal's energy, in dB (higher = brighter). */
function brightnessDb(samples: Float32Array): number {
  let signal = 0;
  let difference = 0;
  for (let i = 1; i < samples.length; i++) {
    signal += samples[i]! * samples[i]!;
    difference += (samples[i]! - samples[i - 1]!) ** 2;
  }
  return 10 * Math.log10(difference / signal);
}

async function prosodyDeltas(engine: Synthesizer, setup: { language: string; voice: string; text: string }) {
  const measured = new Map<string, ReturnType<typeof measure> & { brightnessDb: number }>();
  for (const emotion of emotions) {
    const audio = await collect(engine.synthesize({ text: setup.text, language: setup.language, voice: { id: setup.voice }, emotion }));
    measured.set(emotion, { ...measure(audio.samples, audio.sampleRate), brightnessDb: brightnessDb(audio.samples) });
  }
  const neutral = measured.get('neutral')!;
  return Object.fromEntries(
    emotions.map((emotion) => {
      const m = measured.get(emotion)!;
      return [
        emotion,
        {
          f0MedianHz: round(m.medianHz),
          f0LevelSemitones: m.medianHz > 0 ? round(12 * Math.log2(m.medianHz / neutral.medianHz)) : null,
          f0RangeSemitones: round(m.rangeSemitones),
          f0RangeDeltaSemitones: round(m.rangeSemitones - neutral.rangeSemitones),
          rateRelative: round(neutral.durationSeconds / m.durationSeconds),
          energyDeltaDb: round(m.activeRmsDb - neutral.activeRmsDb),
          brightnessDeltaDb: round(m.brightnessDb - neutral.brightnessDb),
          voicedFraction: round(m.voicedFraction),
        },
      ];
    }),
  );
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

const loadAverageAtStart = loadavg();
const kokoro = await loadKokoro(threads);
const espeak = await EspeakSynthesizer.load();
// Warm-up: the first run of a session allocates its buffers.
await collect(kokoro.synthesize({ text: 'Warm up.', language: 'en-us', voice: { id: 'af_heart' } }));

const kokoroSentences: SpeedSample[] = [];
for (const [language, text] of oneSentence) {
  kokoroSentences.push({ language, text, ...(await timed(kokoro, { text, language, voice: { id: kokoro.defaultVoice(language)! } })) });
  process.stdout.write(`kokoro ${language}: first ${kokoroSentences.at(-1)!.firstAudioMs.toFixed(0)} ms, rtf ${kokoroSentences.at(-1)!.rtf.toFixed(3)}\n`);
}
const kokoroParagraph = await timed(kokoro, { text: paragraph, language: 'en-us', voice: { id: 'af_heart' } });
const espeakSentences: SpeedSample[] = [];
for (const [language, text] of oneSentence) {
  espeakSentences.push({ language, text, ...(await timed(espeak, { text, language: language === 'pt-br' ? 'pt-br' : language, voice: { id: `espeak-${language}` } })) });
}

const results = {
  generatedAt: new Date().toISOString(),
  machine: { threads, loadAverageAtStart, loadAverageAtEnd: loadavg() },
  notes: [
    'rtf = wall seconds / audio seconds; cpuRtf = process CPU seconds / audio seconds (independent of other load on the machine).',
    'firstAudioMs = time from the request to the first streamed chunk for a one-sentence request.',
    'Round-trip WER is not measured here: the transcription engine lives on another branch.',
  ],
  kokoro: {
    oneSentence: {
      medianFirstAudioMs: round(median(kokoroSentences.map((s) => s.firstAudioMs))),
      medianRtf: round(median(kokoroSentences.map((s) => s.rtf))),
      medianCpuRtf: round(median(kokoroSentences.map((s) => s.cpuRtf))),
      samples: kokoroSentences.map((s) => ({ ...s, firstAudioMs: round(s.firstAudioMs), totalMs: round(s.totalMs), audioSeconds: round(s.audioSeconds), rtf: round(s.rtf), cpuRtf: round(s.cpuRtf) })),
    },
    paragraph: Object.fromEntries(Object.entries(kokoroParagraph).map(([k, v]) => [k, round(v)])),
    emotions: await prosodyDeltas(kokoro, emotionText.kokoro),
  },
  espeak: {
    oneSentence: {
      medianFirstAudioMs: round(median(espeakSentences.map((s) => s.firstAudioMs))),
      medianRtf: round(median(espeakSentences.map((s) => s.rtf))),
      medianCpuRtf: round(median(espeakSentences.map((s) => s.cpuRtf))),
    },
    languages: espeak.languages().length,
    emotions: await prosodyDeltas(espeak, emotionText.espeak),
  },
};
await kokoro.close();
mkdirSync(path.join(benchDir, 'results'), { recursive: true });
writeFileSync(path.join(benchDir, 'results', 'tts.json'), JSON.stringify(results, null, 2) + '\n');
process.stdout.write(`${JSON.stringify({ kokoro: { oneSentence: { ...results.kokoro.oneSentence, samples: undefined }, paragraph: results.kokoro.paragraph }, espeak: results.espeak.oneSentence, load: results.machine }, null, 1)}\n`);

/**
 * Generated separation mixtures unlike the DnR-style ones (issue 37), fixed before any routing was tuned and scored
 * apart, one kind at a time:
 * - `music_free`: speech over the eval/sep effect stems (dog and car horn events, whale-song ambience), no music;
 * - `tonal_sfx`: speech over synthesized tonal effects (whistle glides, beeps, a door chime, an arpeggio jingle) and
 *   the eval robin whistle, no music: what a music- or voice-mask takes for tone;
 * - `babble`: speech over a crowd of eight other eval talkers (eval/vc and eval/asr), an ambience;
 * - `sung`: speech over an instrumental (immich-memories-music, as ./separation-mixtures.ts) with a synthesized sung
 *   line on top (vowels by formant synthesis on a melody with vibrato; no eval material has singing). The sung line
 *   belongs to the music stem.
 * Speech: two eval/vc clips (LibriSpeech and VCTK talkers, none in the babble) per mixture; speech-to-background ratio
 * -5, 0 and +5 dB. Mixture i is in the tuning part when i is even, held out when odd (by construction, before tuning).
 * All at 44.1 kHz mono, `excerptSeconds` long.
 */
import path from 'node:path';
import { decodeFile } from '../src/audio/decode.js';
import { pipDownload, unpack } from '../src/models/fetch.js';
import { random } from './lib/conversations.js';
import { musicPackage, speechToBackgroundDb } from './separation-mixtures.js';

const sampleRate = 44100;
const excerptSeconds = 12;
const length = excerptSeconds * sampleRate;

export const unseenKinds = ['music_free', 'tonal_sfx', 'babble', 'sung'] as const;
export type UnseenKind = (typeof unseenKinds)[number];
export type UnseenStem = 'dialogue' | 'music' | 'sfx' | 'ambience' | 'effects';

export interface UnseenMixture {
  id: string;
  kind: UnseenKind;
  part: 'tuning' | 'held-out';
  mixture: Float32Array;
  references: Partial<Record<UnseenStem, Float32Array>>;
}

const speechClips = [
  'vc/resemblyzer_librispeech/3080-5032-0001.wav',
  'vc/rtvc_samples/p240_00000.wav',
  'vc/resemblyzer_librispeech/2033-164914-0001.wav',
  'vc/rtvc_samples/p260_00000.wav',
  'vc/resemblyzer_librispeech/1998-15444-0001.wav',
  'vc/rtvc_samples/3575_00000.wav',
  'vc/resemblyzer_librispeech/3005-163389-0001.wav',
  'vc/rtvc_samples/8230_00000.wav',
];
/** Eight talkers none of `speechClips` has. */
const babbleClips = [
  'vc/pv_eagle/speaker_1_utt_1.wav',
  'vc/pv_eagle/speaker_2_test_utt.wav',
  'vc/rtvc_samples/1320_00000.wav',
  'vc/rtvc_samples/6829_00000.wav',
  'asr/whisper_cpp/jfk.wav',
  'asr/pv_leopard/test_de.wav',
  'asr/firered/TEST_MEETING_T0000000001_S00000.wav',
  'asr/deepspeech/ru.wav',
];
const eventStems = ['sep/dnr_mix03/sfx.wav'];
const ambienceStem = 'sep/dnr_mix02/sfx.wav';
const robinStem = 'sep/dnr_mix01/sfx.wav';
/** Instrumentals (checked voice-free by ./separation-mixtures.ts) and where their excerpts start. */
const instrumentals = ['calm/calm_acoustic_1.opus', 'happy/happy_acoustic_1.opus', 'energetic/energetic_electronic_2.opus'];
const instrumentalOffsetSeconds = 8;

function rms(samples: Float32Array): number {
  let sum = 0;
  for (const v of samples) sum += v * v;
  return Math.sqrt(sum / samples.length);
}

const scaled = (samples: Float32Array, gain: number): Float32Array => samples.map((v) => v * gain);
const added = (a: Float32Array, b: Float32Array): Float32Array => a.map((v, i) => v + b[i]!);

/** `samples` repeated or cut to `length`. */
function fitted(samples: Float32Array): Float32Array {
  const out = new Float32Array(length);
  for (let at = 0; at < length && samples.length > 0; at += samples.length) out.set(samples.subarray(0, length - at), at);
  return out;
}

/** Two clips, 0.5 s in and 0.6 s apart. */
function talkTrack(first: Float32Array, second: Float32Array): Float32Array {
  const talk = new Float32Array(length);
  const start = Math.round(0.5 * sampleRate);
  talk.set(first.subarray(0, Math.max(0, length - start)), start);
  const secondStart = start + first.length + Math.round(0.6 * sampleRate);
  if (secondStart < length) talk.set(second.subarray(0, length - secondStart), secondStart);
  return talk;
}

/** Adds a tone at `at` seconds: frequency track `hz(t)`, partial amplitudes, attack and exponential decay. */
function addTone(
  out: Float32Array,
  atSeconds: number,
  durationSeconds: number,
  hz: (t: number) => number,
  partials: number[],
  decaySeconds = Infinity,
): void {
  const start = Math.round(atSeconds * sampleRate);
  const n = Math.round(durationSeconds * sampleRate);
  const attack = Math.round(0.005 * sampleRate);
  let phase = 0;
  for (let i = 0; i < n && start + i < out.length; i++) {
    const t = i / sampleRate;
    phase += (2 * Math.PI * hz(t)) / sampleRate;
    const envelope = Math.min(1, i / attack, (n - i) / attack) * Math.exp(-t / decaySeconds);
    let v = 0;
    for (const [k, a] of partials.entries()) v += a * Math.sin((k + 1) * phase);
    out[start + i]! += envelope * v;
  }
}

/** Whistle glides, beeps, a two-note door chime and a square-ish arpeggio jingle, spread over the excerpt. */
function tonalEffects(seed: number): Float32Array {
  const out = new Float32Array(length);
  const next = random(seed);
  const shift = (): number => 0.8 * next();
  addTone(out, 0.3 + shift(), 0.7, (t) => 1400 + 1600 * (t / 0.7), [1]);
  addTone(out, 1.4 + shift(), 0.8, (t) => 2600 - 900 * (t / 0.8) + 120 * Math.sin(2 * Math.PI * 7 * t), [1]);
  for (let b = 0; b < 4; b++) addTone(out, 3 + shift() / 4 + 0.3 * b, 0.15, () => 1000, [1, 0.2]);
  addTone(out, 5.2 + shift(), 1.6, () => 659.3, [1, 0.5, 0.25, 0.12], 0.5);
  addTone(out, 5.8 + shift(), 2, () => 523.3, [1, 0.5, 0.25, 0.12], 0.6);
  for (const [n, hz] of [523.3, 659.3, 784, 1046.5].entries())
    addTone(out, 8.3 + shift() / 4 + 0.12 * n, 0.12, () => hz, [1, 0, 0.33, 0, 0.2]);
  addTone(out, 10 + shift(), 1.2, (t) => 1800 + 400 * Math.sin(2 * Math.PI * 3 * t), [1]);
  return out;
}

/** Vowel formants (Hz) and bandwidths of a sung /a/, /e/, /o/, /i/. */
const vowels: Array<Array<[number, number]>> = [
  [
    [800, 80],
    [1150, 90],
    [2900, 120],
  ],
  [
    [400, 60],
    [1600, 80],
    [2700, 120],
  ],
  [
    [450, 70],
    [800, 80],
    [2830, 100],
  ],
  [
    [270, 60],
    [2140, 90],
    [2950, 120],
  ],
];

/**
 * A sung line: notes of a melody (MIDI numbers, 0.45 s each, legato), a glottal-like source of harmonics falling
 * 12 dB per octave shaped by a vowel's formants, 5.5 Hz vibrato of 2 %, one vowel per note.
 */
function sungLine(seed: number, baseMidi: number): Float32Array {
  const out = new Float32Array(length);
  const next = random(seed);
  const steps = [0, 2, 4, 5, 7, 9, 7, 5, 4, 2];
  const noteSeconds = 0.45;
  let phase = 0;
  let note = Math.floor(next() * steps.length);
  for (let start = Math.round(0.2 * sampleRate); start < length; start += Math.round(noteSeconds * sampleRate)) {
    note = (note + 1 + Math.floor(next() * 2)) % steps.length;
    const f0 = 440 * 2 ** ((baseMidi + steps[note]! - 69) / 12);
    const formants = vowels[Math.floor(next() * vowels.length)]!;
    const harmonics = Math.floor(5000 / f0);
    const amplitude = Array.from({ length: harmonics }, (_, h) => {
      const f = (h + 1) * f0;
      const resonance = formants.reduce((sum, [centre, width]) => sum + 1 / (1 + ((f - centre) / width) ** 2), 0.05);
      return resonance / (h + 1) ** 2;
    });
    const n = Math.min(length - start, Math.round(noteSeconds * sampleRate));
    const ramp = Math.round(0.03 * sampleRate);
    for (let i = 0; i < n; i++) {
      const t = (start + i) / sampleRate;
      phase += (2 * Math.PI * f0 * (1 + 0.02 * Math.sin(2 * Math.PI * 5.5 * t))) / sampleRate;
      let v = 0;
      for (let h = 0; h < harmonics; h++) v += amplitude[h]! * Math.sin((h + 1) * phase);
      out[start + i] = Math.min(1, i / ramp, (n - i) / ramp) * v;
    }
  }
  return out;
}

export async function unseenMixtures(evalDir: string, cacheDir: string): Promise<UnseenMixture[]> {
  const load = async (clip: string): Promise<Float32Array> =>
    (await decodeFile(path.join(evalDir, clip), { sampleRate, channels: 1 })).samples;
  const speech = await Promise.all(speechClips.map(load));
  const events = await Promise.all(eventStems.map(async (stem) => fitted(await load(stem))));
  const ambience = fitted(await load(ambienceStem));
  const robin = fitted(await load(robinStem));
  // A crowd: each talker looped from its own offset, levels equalised, so the babble has no gaps.
  const babble = new Float32Array(length);
  for (const [n, clip] of babbleClips.entries()) {
    const samples = await load(clip);
    const offset = Math.floor((n / babbleClips.length) * samples.length);
    const looped = fitted(new Float32Array([...samples.subarray(offset), ...samples.subarray(0, offset)]));
    const gain = 1 / rms(looped);
    for (let i = 0; i < length; i++) babble[i]! += looped[i]! * gain;
  }
  const wheel = await pipDownload(musicPackage, cacheDir, false);
  const unpacked = path.join(path.dirname(wheel), 'unpacked');
  await unpack(wheel, unpacked);
  const music = await Promise.all(
    instrumentals.map(async (track) => {
      const decoded = await decodeFile(path.join(unpacked, 'immich_memories_music', 'tracks', track), { sampleRate, channels: 1 });
      return decoded.samples.slice(instrumentalOffsetSeconds * sampleRate, (instrumentalOffsetSeconds + excerptSeconds) * sampleRate);
    }),
  );

  const mixtures: UnseenMixture[] = [];
  let index = 0;
  for (const kind of unseenKinds) {
    for (const ratioDb of speechToBackgroundDb) {
      const variant = mixtures.filter((m) => m.kind === kind).length;
      // Background parts by stem, before levelling.
      let parts: Partial<Record<'music' | 'sfx' | 'ambience', Float32Array>>;
      if (kind === 'music_free') {
        const event = events[variant % events.length]!;
        parts = { sfx: event, ambience: scaled(ambience, (rms(event) / rms(ambience)) * 10 ** (-3 / 20)) };
      } else if (kind === 'tonal_sfx') {
        const tones = tonalEffects(17 + variant);
        parts = { sfx: added(tones, scaled(robin, (rms(tones) / rms(robin)) * 10 ** (-6 / 20))) };
      } else if (kind === 'babble') {
        parts = { ambience: babble.slice(0) };
      } else {
        const instrumental = music[variant % music.length]!;
        const voice = sungLine(31 + variant, 57 + 3 * variant);
        parts = { music: added(instrumental, scaled(voice, rms(instrumental) / rms(voice))) };
      }
      const background = new Float32Array(length);
      for (const part of Object.values(parts)) for (let i = 0; i < length; i++) background[i]! += part[i]!;
      const talk = talkTrack(speech[index % speech.length]!, speech[(index + 1) % speech.length]!);
      const speechGain = (rms(background) / rms(talk)) * 10 ** (ratioDb / 20);
      const mixture = added(scaled(talk, speechGain), background);
      // Headroom: the mixture peaks at -1 dBFS at most, its parts scaled alike.
      const peak = mixture.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
      const gain = Math.min(1, 10 ** (-1 / 20) / peak);
      const references: UnseenMixture['references'] = { dialogue: scaled(talk, speechGain * gain) };
      for (const [stem, part] of Object.entries(parts)) references[stem as 'music' | 'sfx' | 'ambience'] = scaled(part, gain);
      if (parts.sfx || parts.ambience)
        references.effects = scaled(added(parts.sfx ?? new Float32Array(length), parts.ambience ?? new Float32Array(length)), gain);
      mixtures.push({
        id: `${kind}_${ratioDb >= 0 ? '+' : ''}${ratioDb}db`,
        kind,
        part: index % 2 === 0 ? 'tuning' : 'held-out',
        mixture: scaled(mixture, gain),
        references,
      });
      index++;
    }
  }
  return mixtures;
}

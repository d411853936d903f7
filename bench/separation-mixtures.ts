/**
 * Generated separation mixtures, rebuilt the same way on every run from registry-obtainable audio:
 * - speech: two eval/asr clips per mixture (several languages and talkers), 0.5 s in, 0.6 s apart;
 * - music: one track per mood of the PyPI package immich-memories-music 0.1.0 (generated instrumentals, MIT), fetched
 *   with pip into the models' download cache; a track is used only if Spleeter finds no voice in it (vocal share of
 *   the excerpt's energy below `maxVocalShareDb`: instrumentals measure about -20 dB, a sung line would be near 0);
 * - effects: the eval/sep effect stems (bird calls, whale song ambience, dog bark and car horn), 6 dB under the music;
 * - speech-to-background ratio -5, 0 and +5 dB over the whole excerpt.
 * All at 44.1 kHz mono, `excerptSeconds` long.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { decodeFile } from '../src/audio/decode.js';
import { stft } from '../src/audio/stft.js';
import { pipDownload, unpack } from '../src/models/fetch.js';
import { SpleeterModel, spleeterBins, spleeterStft } from '../src/operations/separate/engines/spleeter.js';

export const musicPackage = 'immich-memories-music==0.1.0';
const sampleRate = 44100;
const excerptSeconds = 12;
/** Music excerpts start here (past the intros). */
const musicOffsetSeconds = 8;
const maxVocalShareDb = -12;
const effectsUnderMusicDb = 6;
export const speechToBackgroundDb = [-5, 0, 5];
const speechClips = [
  'asr/pv_leopard/test.wav',
  'asr/pv_leopard/test_es.wav',
  'asr/pv_leopard/test_de.wav',
  'asr/pv_leopard/test_fr.wav',
  'asr/pv_leopard/test_it.wav',
  'asr/pv_leopard/test_ja.wav',
  'asr/deepspeech/ru.wav',
  'asr/pv_leopard/test_pt.wav',
  'asr/firered/BAC009S0764W0121.wav',
  'asr/deepspeech/arctic_a0024.wav',
];
export const effectStems = ['sep/dnr_mix01/sfx.wav', 'sep/dnr_mix02/sfx.wav', 'sep/dnr_mix03/sfx.wav'];

export interface GeneratedMixture {
  id: string;
  /** The eval/sep effect stem in it. */
  effectsSource: string;
  mixture: Float32Array;
  speech: Float32Array;
  music: Float32Array;
  effects: Float32Array;
}

export interface MusicTrackCheck {
  track: string;
  vocal_share_db: number;
  used: boolean;
}

function rms(samples: Float32Array): number {
  let sum = 0;
  for (const v of samples) sum += v * v;
  return Math.sqrt(sum / samples.length);
}

function scaled(samples: Float32Array, gain: number): Float32Array {
  return samples.map((v) => v * gain);
}

/** `samples` repeated or cut to `length`. */
function fitted(samples: Float32Array, length: number): Float32Array {
  const out = new Float32Array(length);
  for (let at = 0; at < length && samples.length > 0; at += samples.length) out.set(samples.subarray(0, length - at), at);
  return out;
}

/** Spleeter's vocal estimate's share of the excerpt's energy below 11 kHz, in dB. */
async function vocalShareDb(spleeter: SpleeterModel, samples: Float32Array): Promise<number> {
  const spec = stft(samples, spleeterStft);
  const { vocals } = await spleeter.vocalRatio(spec, 0.5);
  let vocal = 0;
  let total = 0;
  for (let t = 0; t < spec.frames; t++) {
    for (let k = 0; k < spleeterBins; k++) {
      const i = t * spec.bins + k;
      const energy = spec.re[i]! ** 2 + spec.im[i]! ** 2;
      vocal += vocals[t * spleeterBins + k]! ** 2 * energy;
      total += energy;
    }
  }
  return 10 * Math.log10(vocal / total);
}

export async function generatedMixtures(
  evalDir: string,
  cacheDir: string,
  spleeterDir: string,
): Promise<{ mixtures: GeneratedMixture[]; tracks: MusicTrackCheck[] }> {
  const wheel = await pipDownload(musicPackage, cacheDir, false);
  const unpacked = path.join(path.dirname(wheel), 'unpacked');
  await unpack(wheel, unpacked);
  const tracksDir = path.join(unpacked, 'immich_memories_music', 'tracks');
  const length = excerptSeconds * sampleRate;
  const spleeter = await SpleeterModel.load(spleeterDir);
  const tracks: MusicTrackCheck[] = [];
  const music: Array<{ track: string; samples: Float32Array }> = [];
  try {
    for (const [moodIndex, mood] of readdirSync(tracksDir).sort().entries()) {
      let chosen = false;
      // Acoustic and electronic tracks in turn from one mood to the next.
      const preferred = moodIndex % 2 === 0 ? 'acoustic' : 'electronic';
      const files = readdirSync(path.join(tracksDir, mood)).sort();
      for (const file of [...files.filter((f) => f.includes(preferred)), ...files.filter((f) => !f.includes(preferred))]) {
        const track = `${mood}/${file}`;
        const decoded = await decodeFile(path.join(tracksDir, track), { sampleRate, channels: 1 });
        const excerpt = decoded.samples.slice(musicOffsetSeconds * sampleRate, musicOffsetSeconds * sampleRate + length);
        if (excerpt.length < length) continue;
        const share = await vocalShareDb(spleeter, excerpt);
        const used = !chosen && share < maxVocalShareDb;
        tracks.push({ track, vocal_share_db: Math.round(share * 10) / 10, used });
        if (used) {
          music.push({ track, samples: excerpt });
          chosen = true;
        }
      }
    }
  } finally {
    await spleeter.close();
  }

  const speech = await Promise.all(
    speechClips.map(async (clip) => (await decodeFile(path.join(evalDir, clip), { sampleRate, channels: 1 })).samples),
  );
  const effects = await Promise.all(
    effectStems.map(async (stem) => fitted((await decodeFile(path.join(evalDir, stem), { sampleRate, channels: 1 })).samples, length)),
  );
  const mixtures: GeneratedMixture[] = [];
  let index = 0;
  for (const { track, samples: musicExcerpt } of music) {
    for (const ratioDb of speechToBackgroundDb) {
      const first = speech[index % speech.length]!;
      const second = speech[(index + 1) % speech.length]!;
      const talk = new Float32Array(length);
      const start = Math.round(0.5 * sampleRate);
      talk.set(first.subarray(0, Math.max(0, length - start)), start);
      const secondStart = start + first.length + Math.round(0.6 * sampleRate);
      if (secondStart < length) talk.set(second.subarray(0, length - secondStart), secondStart);
      const effect = effects[index % effects.length]!;
      const effectPart = scaled(effect, (rms(musicExcerpt) / rms(effect)) * 10 ** (-effectsUnderMusicDb / 20));
      const background = musicExcerpt.map((v, i) => v + effectPart[i]!);
      const speechPart = scaled(talk, (rms(background) / rms(talk)) * 10 ** (ratioDb / 20));
      const mixture = speechPart.map((v, i) => v + background[i]!);
      // Headroom: the mixture peaks at -1 dBFS at most, its parts scaled alike.
      const peak = mixture.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
      const gain = Math.min(1, 10 ** (-1 / 20) / peak);
      mixtures.push({
        id: `gen_${path.basename(track, '.opus')}_${ratioDb >= 0 ? '+' : ''}${ratioDb}db`,
        effectsSource: effectStems[index % effectStems.length]!,
        mixture: scaled(mixture, gain),
        speech: scaled(speechPart, gain),
        music: scaled(musicExcerpt, gain),
        effects: scaled(effectPart, gain),
      });
      index++;
    }
  }
  return { mixtures, tracks };
}

/**
 * Film-style clips for the dubbing bench (issue 40), fixed before any tuning and rebuilt the same way on every run:
 * - dialogue: eval/asr and eval/vc utterances (16 kHz, trimmed; those of 4 s or more split at their longest pause near the
 *   middle, so a speaker has several lines), two to four speakers per clip taking turns in a seeded order, 0.3-1 s apart;
 *   in the clips marked `tightFollow` one line is followed 0.12 s after its end by another speaker's (a dub must not run
 *   over it). Each speaker at its own level, -22 dBFS RMS +-2 dB;
 * - background: an eval/sep music stem looped under the whole clip (-30 dBFS RMS), an eval/sep effect stem (bird calls,
 *   or dog bark and car horn) twice at seeded places (-27 dBFS RMS over the stem), and the whale-song ambience stem
 *   (-40 dBFS RMS), the levels of DnR-style film mixtures (dialogue over effects over music);
 * - 1 s of background before the first line and 1.5 s after the last; everything at 44.1 kHz mono, scaled together so the
 *   mixture peaks at -1 dBFS at most: mixture = dialogue + music + sfx + ambience exactly.
 * Languages: es/it/pt, fr/de/ru, zh (four talkers), ja/ko with an English line (mixed), and two English clips (re-voiced
 * in English). Split by clip: `tuning` for choosing any recipe, `held-out` for the figures reported; each part has an
 * English clip, a tight follow-up and its own talkers.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { decodeFile } from '../src/audio/decode.js';
import { encodeWaveformToFile } from '../src/audio/encode.js';
import { resample } from '../src/audio/resample.js';
import { conversationSampleRate, random, trimmed } from './lib/conversations.js';

export const dubbingSampleRate = 44100;

export interface DubbingLine {
  speaker: string;
  language: string;
  startSeconds: number;
  endSeconds: number;
  /** The eval transcript when the line is a whole utterance; null for a part of one (where it was cut is not transcribed). */
  text: string | null;
  /** The eval file it comes from. */
  source: string;
}

export interface DubbingClip {
  id: string;
  part: 'tuning' | 'held-out';
  /** The dub's target: English, which for an English clip re-voices it in its own language. */
  targetLanguage: 'en';
  languages: string[];
  speakers: string[];
  lines: DubbingLine[];
  sampleRate: number;
  mixture: Float32Array;
  dialogue: Float32Array;
  music: Float32Array;
  sfx: Float32Array;
  ambience: Float32Array;
  /** music + sfx + ambience: what a dub must keep. */
  background: Float32Array;
}

interface ClipPlan {
  id: string;
  part: 'tuning' | 'held-out';
  /** Speaker -> eval files (asr/... or vc/...). */
  speakers: Record<string, string[]>;
  tightFollow: boolean;
}

const plans: ClipPlan[] = [
  {
    id: 'es-it-pt',
    part: 'tuning',
    speakers: {
      pv_leopard_es: ['asr/pv_leopard/test_es.wav'],
      pv_leopard_it: ['asr/pv_leopard/test_it.wav'],
      pv_leopard_pt: ['asr/pv_leopard/test_pt.wav'],
    },
    tightFollow: false,
  },
  {
    id: 'fr-de-ru',
    part: 'held-out',
    speakers: {
      pv_leopard_fr: ['asr/pv_leopard/test_fr.wav'],
      pv_leopard_de: ['asr/pv_leopard/test_de.wav'],
      deepspeech_ru: ['asr/deepspeech/ru.wav'],
    },
    tightFollow: true,
  },
  {
    id: 'ja-ko-en',
    part: 'tuning',
    speakers: {
      pv_leopard_ja: ['asr/pv_leopard/test_ja.wav'],
      pv_leopard_ko: ['asr/pv_leopard/test_ko.wav'],
      julius_segkit_sample: ['asr/julius_segkit/sample.wav'],
      cmu_arctic_unknown: ['asr/deepspeech/arctic_a0024.wav'],
    },
    tightFollow: false,
  },
  {
    id: 'zh',
    part: 'held-out',
    speakers: {
      firered_TEST_MEETING_T0000000001_S00000: ['asr/firered/TEST_MEETING_T0000000001_S00000.wav'],
      firered_BAC009S0764W0121: ['asr/firered/BAC009S0764W0121.wav'],
      firered_IT0011W0001: ['asr/firered/IT0011W0001.wav'],
      firered_TEST_NET_Y0000000000_KTKHdZ2fb8_S00000: ['asr/firered/TEST_NET_Y0000000000_-KTKHdZ2fb8_S00000.wav'],
    },
    tightFollow: false,
  },
  {
    id: 'en-eagle',
    part: 'tuning',
    speakers: {
      pv_eagle_speaker_1: ['vc/pv_eagle/speaker_1_utt_1.wav', 'vc/pv_eagle/speaker_1_utt_2.wav'],
      pv_eagle_speaker_2: ['vc/pv_eagle/speaker_2_test_utt.wav'],
    },
    tightFollow: true,
  },
  {
    id: 'en-librispeech',
    part: 'held-out',
    speakers: {
      librispeech_3080: ['vc/resemblyzer_librispeech/3080-5032-0001.wav', 'vc/resemblyzer_librispeech/3080-5032-0004.wav'],
      librispeech_2033: ['vc/resemblyzer_librispeech/2033-164914-0001.wav', 'vc/resemblyzer_librispeech/2033-164914-0003.wav'],
    },
    tightFollow: true,
  },
];

const musicStems = ['sep/dnr_mix01/music.wav', 'sep/dnr_mix02/music.wav', 'sep/dnr_mix03/music.wav'];
/** Bird calls; dog bark and car horn. */
const effectStems = ['sep/dnr_mix01/sfx.wav', 'sep/dnr_mix03/sfx.wav'];
const ambienceStem = 'sep/dnr_mix02/sfx.wav';
const dialogueDb = -22;
const speakerSpreadDb = 2;
const musicDb = -30;
const sfxDb = -27;
const ambienceDb = -40;
const leadSeconds = 1;
const tailSeconds = 1.5;
const tightGapSeconds = 0.12;
/** Utterances at least this long are split in two at a pause. */
const splitFromSeconds = 4;
const crossfadeSeconds = 1;

interface EvalEntry {
  audio: string;
  language: string;
  transcript?: string;
}

function rms(samples: Float32Array): number {
  let sum = 0;
  for (const v of samples) sum += v * v;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

const scaledTo = (samples: Float32Array, db: number): Float32Array => {
  const gain = 10 ** (db / 20) / (rms(samples) || 1);
  return samples.map((v) => v * gain);
};

/**
 * The utterance in two at the middle of its longest pause (20 ms frames 35 dB under the loudest, at least 100 ms) within
 * its middle 30-70 %, each part trimmed and at least 1.5 s; the whole utterance when there is no such pause.
 */
export function splitAtPause(samples: Float32Array, sampleRate: number): Float32Array[] {
  if (samples.length < splitFromSeconds * sampleRate) return [samples];
  const frame = Math.round(0.02 * sampleRate);
  const levels: number[] = [];
  for (let i = 0; i + frame <= samples.length; i += frame) {
    let sum = 0;
    for (let j = i; j < i + frame; j++) sum += samples[j]! ** 2;
    levels.push(10 * Math.log10(sum / frame + 1e-12));
  }
  const floor = Math.max(...levels) - 35;
  let best = { start: 0, length: 0 };
  let run = { start: 0, length: 0 };
  for (let f = Math.floor(0.3 * levels.length); f < Math.ceil(0.7 * levels.length); f++) {
    if (levels[f]! < floor) {
      run = run.length === 0 ? { start: f, length: 1 } : { start: run.start, length: run.length + 1 };
      if (run.length > best.length) best = run;
    } else run = { start: 0, length: 0 };
  }
  if (best.length * 0.02 < 0.1) return [samples];
  const cut = (best.start + Math.floor(best.length / 2)) * frame;
  const parts = [trimmed(samples.subarray(0, cut)), trimmed(samples.subarray(cut))];
  return parts.every((p) => p.length >= 1.5 * sampleRate) ? parts : [samples];
}

/** `samples` looped to `length` with a linear crossfade at each seam (no click where the loop starts again). */
export function looped(samples: Float32Array, length: number, fadeSamples: number): Float32Array {
  const out = new Float32Array(length);
  const step = samples.length - fadeSamples;
  for (let at = 0; at < length; at += step) {
    for (let i = 0; i < samples.length && at + i < length; i++) {
      const fadeIn = at > 0 && i < fadeSamples ? i / fadeSamples : 1;
      const fadeOut = i >= step && at + step < length ? (samples.length - i) / fadeSamples : 1;
      out[at + i]! += samples[i]! * fadeIn * fadeOut;
    }
  }
  return out;
}

interface Piece {
  speaker: string;
  language: string;
  source: string;
  text: string | null;
  samples: Float32Array;
}

export async function dubbingClips(evalDir: string, manifest: { asr: EvalEntry[]; vc: EvalEntry[] }): Promise<DubbingClip[]> {
  const entries = new Map([...manifest.asr, ...manifest.vc].map((e) => [e.audio, e]));
  const load = async (file: string, sampleRate: number): Promise<Float32Array> =>
    (await decodeFile(path.join(evalDir, file), { sampleRate, channels: 1 })).samples;
  const toClipRate = async (samples: Float32Array): Promise<Float32Array> =>
    (await resample({ samples, sampleRate: conversationSampleRate, channels: 1 }, dubbingSampleRate)).samples;
  const music = await Promise.all(musicStems.map((f) => load(f, dubbingSampleRate)));
  const effects = await Promise.all(effectStems.map((f) => load(f, dubbingSampleRate)));
  const ambienceSource = await load(ambienceStem, dubbingSampleRate);

  const clips: DubbingClip[] = [];
  for (const [index, plan] of plans.entries()) {
    const next = random(4000 + index);
    // Each speaker's pieces, then taken in turn (a speaker with more pieces speaks again at the end).
    const bySpeaker: Piece[][] = [];
    for (const [speaker, files] of Object.entries(plan.speakers)) {
      const levelDb = dialogueDb + speakerSpreadDb * (2 * next() - 1);
      const pieces: Piece[] = [];
      for (const file of files) {
        const entry = entries.get(file);
        if (!entry) throw new Error(`${file} is not in the eval manifest`);
        const parts = splitAtPause(trimmed(await load(file, conversationSampleRate)), conversationSampleRate);
        for (const part of parts) {
          pieces.push({
            speaker,
            language: entry.language,
            source: file,
            text: parts.length === 1 ? (entry.transcript ?? null) : null,
            samples: scaledTo(await toClipRate(part), levelDb),
          });
        }
      }
      bySpeaker.push(pieces);
    }
    const order: Piece[] = [];
    const speakers = bySpeaker.map((_, i) => i);
    // A seeded first speaker and rotation: who opens differs from clip to clip.
    const offset = Math.floor(next() * speakers.length);
    for (let round = 0; order.length < bySpeaker.flat().length; round++) {
      for (const s of speakers) {
        const piece = bySpeaker[(s + offset) % speakers.length]![round];
        if (piece) order.push(piece);
      }
    }
    // The tight follow-up: after the first line followed by another speaker's, past the opening line.
    const tightAfter = plan.tightFollow ? order.findIndex((p, i) => i >= 1 && order[i + 1] && order[i + 1]!.speaker !== p.speaker) : -1;
    const lines: DubbingLine[] = [];
    let cursor = leadSeconds;
    for (const [i, piece] of order.entries()) {
      const startSeconds = cursor;
      const endSeconds = startSeconds + piece.samples.length / dubbingSampleRate;
      lines.push({ speaker: piece.speaker, language: piece.language, startSeconds, endSeconds, text: piece.text, source: piece.source });
      cursor = endSeconds + (i === tightAfter ? tightGapSeconds : 0.3 + 0.7 * next());
    }
    const length = Math.round((lines.at(-1)!.endSeconds + tailSeconds) * dubbingSampleRate);
    const dialogue = new Float32Array(length);
    for (const [i, piece] of order.entries()) dialogue.set(piece.samples, Math.round(lines[i]!.startSeconds * dubbingSampleRate));

    const musicBed = scaledTo(looped(music[index % music.length]!, length, crossfadeSeconds * dubbingSampleRate), musicDb);
    const ambience = scaledTo(looped(ambienceSource, length, crossfadeSeconds * dubbingSampleRate), ambienceDb);
    const effect = scaledTo(effects[index % effects.length]!, sfxDb);
    const sfx = new Float32Array(length);
    for (let k = 0; k < 2; k++) {
      // Two placements, one in each half of the clip.
      const at = Math.floor(((k + next()) / 2) * Math.max(0, length - effect.length));
      for (let i = 0; i < effect.length && at + i < length; i++) sfx[at + i]! += effect[i]!;
    }
    let peakValue = 0;
    for (let i = 0; i < length; i++) peakValue = Math.max(peakValue, Math.abs(dialogue[i]! + musicBed[i]! + sfx[i]! + ambience[i]!));
    const gain = Math.min(1, 10 ** (-1 / 20) / peakValue);
    const stems = [dialogue, musicBed, sfx, ambience].map((s) => s.map((v) => v * gain)) as [
      Float32Array,
      Float32Array,
      Float32Array,
      Float32Array,
    ];
    const background = stems[1].map((v, i) => v + stems[2][i]! + stems[3][i]!);
    clips.push({
      id: plan.id,
      part: plan.part,
      targetLanguage: 'en',
      languages: [...new Set(lines.map((l) => l.language))],
      speakers: Object.keys(plan.speakers),
      lines,
      sampleRate: dubbingSampleRate,
      mixture: background.map((v, i) => v + stems[0][i]!),
      dialogue: stems[0],
      music: stems[1],
      sfx: stems[2],
      ambience: stems[3],
      background,
    });
  }
  return clips;
}

/**
 * Writes each clip under `dir/<id>/`: mixture.wav (16-bit, what is uploaded), the stems as 32-bit float WAV (dialogue,
 * music, sfx, ambience, background) and lines.json (speakers, languages, line onsets and ends in seconds, texts).
 */
export async function writeDubbingClips(clips: DubbingClip[], dir: string): Promise<Record<string, string>> {
  const written: Record<string, string> = {};
  for (const clip of clips) {
    const clipDir = path.join(dir, clip.id);
    await mkdir(clipDir, { recursive: true });
    const wave = (samples: Float32Array) => ({ samples, sampleRate: clip.sampleRate, channels: 1 });
    await encodeWaveformToFile(wave(clip.mixture), { format: 'wav' }, path.join(clipDir, 'mixture.wav'));
    for (const stem of ['dialogue', 'music', 'sfx', 'ambience', 'background'] as const)
      await encodeWaveformToFile(wave(clip[stem]), { format: 'wav', wavSampleFormat: 'f32' }, path.join(clipDir, `${stem}.wav`));
    const { id, part, targetLanguage, languages, speakers, lines, sampleRate } = clip;
    await writeFile(
      path.join(clipDir, 'lines.json'),
      `${JSON.stringify({ id, part, targetLanguage, languages, speakers, sampleRate, durationSeconds: clip.mixture.length / sampleRate, lines }, null, 2)}\n`,
    );
    written[clip.id] = clipDir;
  }
  return written;
}

/**
 * Conversations generated from clean single-speaker clips (eval/vc and eval/asr), with their exact reference turns:
 * seeded, so the audio is the same on every machine. The diarization bench, the speaker-identification bench and the
 * named-speaker tests build theirs here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeFile } from '../../src/audio/decode.js';
import { parseRttm, parseUem, type Turn } from './der.js';

export const conversationSampleRate = 16000;

export interface Conversation {
  samples: Float32Array;
  reference: Turn[];
}

/** Mulberry32: a small seeded generator, so the generated set is identical on every machine. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The clip without its leading and trailing silence (20 ms frames under -40 dB of the clip's peak frame). */
export function trimmed(samples: Float32Array): Float32Array {
  const frame = 320;
  const levels: number[] = [];
  for (let i = 0; i + frame <= samples.length; i += frame) {
    let sum = 0;
    for (let j = i; j < i + frame; j++) sum += samples[j]! ** 2;
    levels.push(10 * Math.log10(sum / frame + 1e-12));
  }
  const floor = Math.max(...levels) - 40;
  const first = levels.findIndex((l) => l > floor);
  const last = levels.length - 1 - [...levels].reverse().findIndex((l) => l > floor);
  return samples.slice(first * frame, (last + 1) * frame);
}

/** Same RMS for every clip (-25 dBFS), so an overlap is not just a loud voice over a quiet one. */
export function levelled(samples: Float32Array): Float32Array {
  let sum = 0;
  for (const v of samples) sum += v * v;
  const gain = 10 ** (-25 / 20) / Math.sqrt(sum / samples.length || 1);
  return samples.map((v) => v * gain);
}

/**
 * Turns of the chosen speakers, never the same one twice in a row: each an excerpt of 2-5 s of one of the speaker's
 * clips (16 kHz, trimmed and levelled); a third of them start over the end of the previous one (0.3-1.2 s of overlap),
 * the rest after a pause of 0.2-1 s.
 */
export function buildConversation(
  clipsBySpeaker: ReadonlyMap<string, Float32Array[]>,
  speakers: string[],
  next: () => number,
  turns = 8,
): Conversation {
  const sampleRate = conversationSampleRate;
  const placed: Array<{ speaker: string; start: number; clip: Float32Array }> = [];
  let cursor = 0.5 * sampleRate;
  let previous = -1;
  for (let turn = 0; turn < turns; turn++) {
    let who = Math.floor(next() * speakers.length);
    if (who === previous) who = (who + 1) % speakers.length;
    previous = who;
    const clips = clipsBySpeaker.get(speakers[who]!)!;
    const source = clips[Math.floor(next() * clips.length)]!;
    // An excerpt of 2-5 s (the whole clip when shorter).
    const length = Math.min(source.length, Math.round((2 + 3 * next()) * sampleRate));
    const offset = Math.floor(next() * (source.length - length));
    const clip = source.subarray(offset, offset + length);
    const gapSeconds = next() < 1 / 3 ? -(0.3 + 0.9 * next()) : 0.2 + 0.8 * next();
    const start = turn === 0 ? cursor : Math.max(placed.at(-1)!.start + 0.5 * sampleRate, cursor + Math.round(gapSeconds * sampleRate));
    placed.push({ speaker: speakers[who]!, start, clip });
    cursor = Math.max(cursor, start + clip.length);
  }
  const samples = new Float32Array(cursor + 0.5 * sampleRate);
  for (const p of placed) for (let i = 0; i < p.clip.length; i++) samples[p.start + i] = samples[p.start + i]! + p.clip[i]!;
  const reference = placed.map((p) => ({
    speaker: p.speaker,
    startSeconds: p.start / sampleRate,
    endSeconds: (p.start + p.clip.length) / sampleRate,
  }));
  return { samples, reference };
}

interface ManifestClip {
  id: string;
  audio: string;
  speaker: string;
  duration_s: number;
}

/**
 * The diarization bench's set: 12 conversations (six of two speakers, six of three) from the clean clips of at least 3 s
 * of eval/vc and eval/asr (the stereo file's channels are one conversation, so not used).
 */
export async function generatedConversations(
  evalDir: string,
  manifest: { vc: ManifestClip[]; asr: ManifestClip[] },
): Promise<Array<Conversation & { id: string; speakers: number }>> {
  const entries = [...manifest.vc, ...manifest.asr].filter((e) => e.duration_s >= 3 && !e.id.startsWith('faster_whisper/'));
  const bySpeaker = new Map<string, Float32Array[]>();
  for (const entry of entries) {
    const clip = levelled(
      trimmed((await decodeFile(path.join(evalDir, entry.audio), { sampleRate: conversationSampleRate, channels: 1 })).samples),
    );
    bySpeaker.set(entry.speaker, [...(bySpeaker.get(entry.speaker) ?? []), clip]);
  }
  const speakers = [...bySpeaker.keys()].sort();
  const conversations: Array<Conversation & { id: string; speakers: number }> = [];
  for (let n = 0; n < 12; n++) {
    const next = random(1000 + n);
    const count = n < 6 ? 2 : 3;
    const chosen: string[] = [];
    while (chosen.length < count) {
      const speaker = speakers[Math.floor(next() * speakers.length)]!;
      if (!chosen.includes(speaker)) chosen.push(speaker);
    }
    conversations.push({ id: `generated/${count}spk-${n}`, ...buildConversation(bySpeaker, chosen, next), speakers: count });
  }
  return conversations;
}

/** A recording with who spoke when: an eval diarization file or a generated conversation. */
export interface DiarizedRecording {
  id: string;
  samples: Float32Array;
  reference: Turn[];
  uem?: Array<[number, number]>;
  speakers: number;
}

/** The eval set's diarization recordings (16 kHz mono) with their RTTM references and scoring regions. */
export async function evalRecordings(
  evalDir: string,
  manifest: { diar: Array<{ id: string; audio: string; rttm: string; uem?: string; num_speakers: number }> },
): Promise<DiarizedRecording[]> {
  return Promise.all(
    manifest.diar.map(async (entry) => ({
      id: entry.id,
      samples: (await decodeFile(path.join(evalDir, entry.audio), { sampleRate: conversationSampleRate, channels: 1 })).samples,
      reference: parseRttm(readFileSync(path.join(evalDir, entry.rttm), 'utf8')),
      ...(entry.uem ? { uem: parseUem(readFileSync(path.join(evalDir, entry.uem), 'utf8')) } : {}),
      speakers: entry.num_speakers,
    })),
  );
}

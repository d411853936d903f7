/**
 * Speech for text that arrives in pieces (an LLM's output on a socket): the text is cut where a clause or sentence is
 * complete, and each cut is spoken by one voice plan chosen when the stream opened.
 */
import type { Scheduler } from '../../core/scheduler.js';
import type { Metrics } from '../../core/metrics.js';
import { minSpokenClauseCharacters } from './text/sentences.js';
import { ssmlDocumentStart, ssmlMarkupIn } from './text/ssml.js';
import type { SynthesizedChunk } from './synthesizer.js';

/** Audio formats of a speech stream: raw 16-bit PCM, or a codec streamed as it encodes. */
export const speechStreamFormats = ['pcm16', 'mp3', 'opus'] as const;
export type SpeechStreamFormat = (typeof speechStreamFormats)[number];

/** A sentence ends at . ! ? … (then whitespace, so "3.5" and "e.g." mid-token are not cut) or at CJK full stops. */
const sentenceBoundary = /[.!?…]["'”»)]*\s+|[。！？]/gu;
const clauseBoundary = /[,;:—–]\s+|[、，；：]/gu;
/** Without a sentence end, text this long is cut at its last clause anyway (an LLM that never ends a sentence). */
const longBufferCharacters = 220;

/**
 * The text ready to be spoken from `buffer`: every complete sentence; with `clauseOk` (the stream's first words, where
 * latency counts most) the first complete clause or sentence alone, so the piece is quick to make; with `opening` too
 * (nothing spoken yet) that clause may be as short as "Sure,": an opening clause said on its own is heard as well as
 * inside its sentence (bench/tts.ts --openers), unlike a short run cut from the middle of one. `final`: everything left.
 */
export function takeSpeakable(
  buffer: string,
  options: { final: boolean; clauseOk: boolean; opening?: boolean },
): { piece: string; rest: string } | undefined {
  // An SSML document is spoken whole, once its </speak> has come however many messages it took (at the end, an
  // unfinished one is handed over for its error). Text before it ends where it starts: never cut together with markup.
  const documentStart = buffer.search(ssmlDocumentStart);
  if (documentStart >= 0) {
    const before = buffer.slice(0, documentStart);
    // Stray markup before it (a `</speak>` sent twice) goes too, to be refused.
    if (/[\p{L}\p{N}]/u.test(before) || ssmlMarkupIn(before)) return { piece: before.trim(), rest: buffer.slice(documentStart) };
    const close = /<\/speak\s*>/u.exec(buffer.slice(documentStart));
    if (close) {
      const end = documentStart + close.index + close[0].length;
      return { piece: buffer.slice(documentStart, end), rest: buffer.slice(end) };
    }
    return options.final ? { piece: buffer.slice(documentStart).trim(), rest: '' } : undefined;
  }
  if (options.final) return /[\p{L}\p{N}]/u.test(buffer) ? { piece: buffer.trim(), rest: '' } : undefined;
  const ends = (pattern: RegExp): number[] => [...buffer.matchAll(pattern)].map((match) => match.index + match[0].length);
  const sentenceEnds = ends(sentenceBoundary);
  let cut = sentenceEnds.at(-1) ?? -1;
  if (options.clauseOk) {
    const minCharacters = options.opening ? 0 : minSpokenClauseCharacters;
    const clauseEnds = ends(clauseBoundary).filter((end) => buffer.slice(0, end).trim().length >= minCharacters);
    cut = Math.min(...[...sentenceEnds, ...clauseEnds].filter((end) => /[\p{L}\p{N}]/u.test(buffer.slice(0, end))), Infinity);
  } else if (cut < 0 && buffer.length >= longBufferCharacters) cut = ends(clauseBoundary).at(-1) ?? -1;
  if (cut <= 0 || !Number.isFinite(cut)) return undefined;
  const piece = buffer.slice(0, cut).trim();
  return /[\p{L}\p{N}]/u.test(piece) ? { piece, rest: buffer.slice(cut) } : undefined;
}

export interface SpeechStreamPlan {
  engine: string;
  model: string;
  language: string;
  /** Of the chunks `speak` yields. */
  sampleRate: number;
  warnings: string[];
  speak(text: string, signal: AbortSignal): AsyncIterable<SynthesizedChunk>;
}

export class SpeechStream {
  constructor(
    private readonly plan: SpeechStreamPlan,
    private readonly scheduler: Scheduler,
    private readonly metrics: Metrics,
  ) {}

  get engine(): string {
    return this.plan.engine;
  }

  get language(): string {
    return this.plan.language;
  }

  get sampleRate(): number {
    return this.plan.sampleRate;
  }

  get warnings(): string[] {
    return this.plan.warnings;
  }

  /** Speaks one piece in an engine slot, handing each chunk over as it is made. */
  async speak(text: string, onChunk: (chunk: SynthesizedChunk) => Promise<void>, signal: AbortSignal): Promise<void> {
    // Rough speaking time, for the scheduler's lane: ~15 characters per second.
    await this.scheduler.run('tts', [...text].length / 15, signal, async (slotSignal) => {
      const startedAt = performance.now();
      let audioSeconds = 0;
      for await (const chunk of this.plan.speak(text, slotSignal ?? signal)) {
        signal.throwIfAborted();
        audioSeconds += chunk.waveform.samples.length / chunk.waveform.sampleRate;
        await onChunk(chunk);
      }
      this.metrics.recordInference(
        { operation: 'tts', engine: this.plan.engine, model: this.plan.model },
        (performance.now() - startedAt) / 1000,
        audioSeconds,
      );
    });
  }
}

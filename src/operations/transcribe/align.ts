/**
 * Forced alignment (POST /v1/audio/align): the time of every word of a given text in the audio. Whisper is made to say
 * the text (teacher-forced greedy decoding, native/whisper-addon's forcedText) and its cross-attention DTW, the one the
 * transcription runs, times each token; a word's confidence is the model's own probability of its tokens before
 * forcing, so words the audio does not say are kept, in order, with a low confidence.
 *
 * Audio longer than one Whisper window is cut at pauses (Silero VAD) into windows of at most `maxAlignWindowSeconds`,
 * and the text with it, greedily, as the audio is decoded a second time (memory stays flat for hour-long files): a quick greedy transcription of each window is matched against the text still to
 * place (edit distance, the text's end free), the words it covers are forced on that window, the rest carried over.
 */
import type { SileroVad, SpeechSegment } from '../../audio/vad.js';
import { speechSegments } from '../../audio/vad.js';
import { concatSamples } from '../../audio/waveform.js';
import { VoxError } from '../../core/errors.js';
import { SampleWindow } from './chunks.js';
import type { AlignedToken, Transcriber } from './transcriber.js';

/** Scripts written without spaces: each character is a word, as Whisper's own word timing does. */
const unspacedLanguages = new Set(['zh', 'ja', 'th', 'lo', 'my', 'yue']);
const letterOrDigit = /[\p{L}\p{N}]/u;

export interface AlignedWord {
  word: string;
  start: number;
  end: number;
  confidence: number;
}

export interface AlignedCharacter {
  character: string;
  start: number;
  end: number;
}

/** The text as forced on the decoder (a leading space, as Whisper writes a text's first word) and its words' byte ranges. */
export function forcedWords(
  text: string,
  language: string,
): { forcedText: string; words: Array<{ word: string; startByte: number; endByte: number }> } {
  const spaced = text.trim().split(/\s+/).filter(Boolean);
  const perCharacter = unspacedLanguages.has(language);
  const forcedText = ` ${spaced.join(' ')}`;
  const words: Array<{ word: string; startByte: number; endByte: number }> = [];
  let byte = 1;
  for (const [i, item] of spaced.entries()) {
    if (i > 0) byte += 1;
    if (!perCharacter) {
      const length = Buffer.byteLength(item);
      words.push({ word: item, startByte: byte, endByte: byte + length });
      byte += length;
      continue;
    }
    // Punctuation joins the character before it (or after it, at the start of a run).
    for (const character of item) {
      const length = Buffer.byteLength(character);
      const last = words.at(-1);
      if (!letterOrDigit.test(character) && last && last.endByte === byte) {
        last.word += character;
        last.endByte += length;
      } else words.push({ word: character, startByte: byte, endByte: byte + length });
      byte += length;
    }
  }
  return { forcedText, words: words.filter((w) => w.word.length > 0) };
}

/**
 * Word times from the forced tokens: a word starts where its first token's sound starts and ends where the next word
 * starts (the last one at the end of its speech, at most `lastWordSeconds` later); its confidence is the geometric mean
 * of its tokens' probabilities.
 */
export function wordsFromTokens(
  words: Array<{ word: string; startByte: number; endByte: number }>,
  tokens: AlignedToken[],
  options: { offsetSeconds: number; endSeconds: number },
): AlignedWord[] {
  const spans: Array<{ startByte: number; endByte: number; token: AlignedToken }> = [];
  let byte = 0;
  for (const token of tokens) {
    spans.push({ startByte: byte, endByte: byte + token.bytes.length, token });
    byte += token.bytes.length;
  }
  const aligned: AlignedWord[] = words.map((word) => {
    const inside = spans.filter((s) => s.endByte > word.startByte && s.startByte < word.endByte);
    const first = inside[0]?.token;
    const logProbability = inside.length > 0 ? inside.reduce((sum, s) => sum + s.token.logProbability, 0) / inside.length : -Infinity;
    return {
      word: word.word,
      start: options.offsetSeconds + (first ? first.startSeconds : 0),
      end: 0,
      confidence: Math.min(1, Math.max(0, Math.exp(logProbability))),
    };
  });
  for (let i = 1; i < aligned.length; i++) aligned[i]!.start = Math.max(aligned[i]!.start, aligned[i - 1]!.start);
  for (const [i, word] of aligned.entries()) {
    const next = aligned[i + 1]?.start ?? Math.min(options.endSeconds, word.start + lastWordSeconds);
    word.start = round(Math.min(word.start, options.endSeconds));
    word.end = round(Math.max(word.start, Math.min(next, options.endSeconds)));
  }
  return aligned;
}

/** How long the last word of a window is taken to last at most: no token follows it to end it. */
const lastWordSeconds = 1;

/** Each word's time shared evenly among its characters; the space before a word takes the gap before it. */
export function characterTimes(words: AlignedWord[]): AlignedCharacter[] {
  const characters: AlignedCharacter[] = [];
  for (const [i, word] of words.entries()) {
    if (i > 0) characters.push({ character: ' ', start: words[i - 1]!.end, end: word.start });
    const letters = [...word.word];
    const step = (word.end - word.start) / letters.length;
    for (const [k, character] of letters.entries())
      characters.push({ character, start: round(word.start + k * step), end: round(word.start + (k + 1) * step) });
  }
  return characters;
}

/** Audio up to one Whisper window is aligned whole. */
const singleWindowSeconds = 30;
/** Longer audio: windows end at pauses and stay inside Whisper's 30 s with room for the padding. */
export const maxAlignWindowSeconds = 25;
/** Context kept before and after a window's speech (Whisper loses a word cut too close; see pipeline.ts). */
const windowPadBeforeSeconds = 1;
const windowPadAfterSeconds = 0.5;
/** UTF-8 bytes forced on one window at most (25 s of fast English is ~550): inside the decoder's 448 tokens for most scripts. */
const maxWindowTextCharacters = 1200;
const sampleRate = 16000;

export interface AlignmentWindow {
  startSeconds: number;
  endSeconds: number;
}

/** Consecutive speech segments grouped while they span at most `maxSeconds`; a window runs from its first to its last. */
export function alignmentWindows(segments: SpeechSegment[], maxSeconds = maxAlignWindowSeconds): AlignmentWindow[] {
  const windows: AlignmentWindow[] = [];
  for (const segment of segments) {
    const current = windows.at(-1);
    if (current && segment.endSeconds - current.startSeconds <= maxSeconds) current.endSeconds = segment.endSeconds;
    else windows.push({ startSeconds: segment.startSeconds, endSeconds: segment.endSeconds });
  }
  return windows;
}

/** Letters and digits, case folded: how words are compared between the text and what Whisper heard. */
const bare = (word: string): string =>
  word
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');

/**
 * How many of the text's words a window's transcript covers: the prefix of `text` the transcript matches best (word edit
 * distance; words with no letters cost nothing to skip), the longest of equally good ones.
 */
export function coveredWords(text: string[], heard: string[]): number {
  const t = text.map(bare);
  const h = heard.map(bare).filter(Boolean);
  if (h.length === 0) return 0;
  // previous[j]: cost of the transcript's first i words against the text's first j.
  let previous = new Array<number>(t.length + 1).fill(0);
  for (let j = 1; j <= t.length; j++) previous[j] = previous[j - 1]! + (t[j - 1] ? 1 : 0);
  for (let i = 1; i <= h.length; i++) {
    const row = new Array<number>(t.length + 1);
    row[0] = i;
    for (let j = 1; j <= t.length; j++) {
      const skip = t[j - 1] ? 1 : 0;
      row[j] = Math.min(previous[j - 1]! + (t[j - 1] === h[i - 1] ? 0 : 1), previous[j]! + 1, row[j - 1]! + skip);
    }
    previous = row;
  }
  let best = 0;
  for (let j = 1; j <= t.length; j++) if (previous[j]! <= previous[best]!) best = j;
  return best;
}

export interface AlignRequest {
  transcriber: Transcriber;
  vad: () => Promise<SileroVad>;
  /**
   * A new pass over the audio from its start, 16 kHz mono, in blocks. It is read twice (speech, then alignment window by
   * window) and never held whole, so memory does not grow with the file.
   */
  audio: () => AsyncIterable<Float32Array>;
  text: string;
  /** ISO 639-1 code or 'auto'. */
  language: string;
  signal?: AbortSignal;
  onProgress?: (fraction: number) => void;
}

/** Every word of the text, timed, over audio of any length. */
export async function alignText(request: AlignRequest): Promise<{ words: AlignedWord[]; language: string; audioSeconds: number }> {
  const { transcriber, signal } = request;
  const align = transcriber.align?.bind(transcriber);
  if (!align) throw new VoxError('not_implemented', `The ${transcriber.engine} engine cannot align text.`);
  const withSignal = signal ? { signal } : {};
  // Pass 1: speech, and the audio itself while it fits one window.
  const vadStream = (await request.vad()).stream();
  const probabilityBlocks: Float32Array[] = [];
  let head: Float32Array[] | undefined = [];
  let totalSamples = 0;
  for await (const block of request.audio()) {
    totalSamples += block.length;
    probabilityBlocks.push(await vadStream.push(block, signal));
    if (totalSamples > singleWindowSeconds * sampleRate) head = undefined;
    else head?.push(block);
  }
  probabilityBlocks.push(await vadStream.flush());
  const audioSeconds = totalSamples / sampleRate;
  if (head) {
    // Words are cut by the detected language's script: detected first when not given.
    const chunk = await align(concatSamples(head), {
      text: forcedWords(request.text, request.language).forcedText,
      language: request.language,
      ...withSignal,
    });
    const { words } = forcedWords(request.text, chunk.language);
    return {
      words: wordsFromTokens(words, chunk.tokens, { offsetSeconds: 0, endSeconds: audioSeconds }),
      language: chunk.language,
      audioSeconds,
    };
  }
  const segments = speechSegments(concatSamples(probabilityBlocks), audioSeconds, {
    minSilenceSeconds: 0.3,
    padBeforeSeconds: windowPadBeforeSeconds,
    padAfterSeconds: windowPadAfterSeconds,
    maxSpeechSeconds: maxAlignWindowSeconds - windowPadBeforeSeconds - windowPadAfterSeconds,
  });
  // No speech found: the text is forced on the start, where the model's probabilities mark it as not said.
  const windows = segments.length > 0 ? alignmentWindows(segments) : [{ startSeconds: 0, endSeconds: maxAlignWindowSeconds }];
  let language = request.language;
  let remaining: ReturnType<typeof forcedWords> | undefined;
  const aligned: AlignedWord[] = [];
  const alignWindow = async (index: number, windowSamples: Float32Array): Promise<void> => {
    const window = windows[index]!;
    const last = index === windows.length - 1;
    let take = Infinity;
    if (!last || (!remaining && language === 'auto')) {
      const hear = (draft: boolean) => transcriber.transcribe(windowSamples, { language, temperature: 0, draft, ...withSignal });
      let heard = await hear(true);
      // A greedy decoding can end at once on speech (a 24 s window of the JFK clip, in bench/forced-alignment.ts --long):
      // the full decoding, with its fallbacks, then says what the window holds.
      if (!heard.segments.some((segment) => /[\p{L}\p{N}]/u.test(segment.text))) heard = await hear(false);
      // The first window decides the language, as transcription does.
      language = heard.language;
      remaining ??= forcedWords(request.text, language);
      if (!last) {
        const heardWords = forcedWords(heard.segments.map((s) => s.text).join(' '), language).words;
        // A window says at most a few times what Whisper heard of it: the match looks no further.
        const lookahead = remaining.words.slice(0, 4 * heardWords.length + 100);
        take = coveredWords(
          lookahead.map((w) => w.word),
          heardWords.map((w) => w.word),
        );
      }
    }
    remaining ??= forcedWords(request.text, language);
    const { forced, words, rest } = splitForced(remaining, take);
    remaining = rest;
    if (words.length > 0) {
      const chunk = await align(windowSamples, { text: forced, language, ...withSignal });
      aligned.push(...wordsFromTokens(words, chunk.tokens, { offsetSeconds: window.startSeconds, endSeconds: window.endSeconds }));
    }
    request.onProgress?.((index + 1) / windows.length);
  };
  // Pass 2: each window as soon as it is decoded; what lies before the next window is let go.
  const pending = new SampleWindow();
  let next = 0;
  const alignReady = async (final: boolean): Promise<void> => {
    for (; next < windows.length; next++) {
      const window = windows[next]!;
      const endSample = Math.ceil(window.endSeconds * sampleRate);
      if (!final && pending.availableUntil < endSample) return;
      await alignWindow(next, pending.take(Math.floor(window.startSeconds * sampleRate), endSample));
      pending.discardBefore(Math.floor((windows[next + 1]?.startSeconds ?? window.endSeconds) * sampleRate));
    }
  };
  for await (const block of request.audio()) {
    pending.push(block);
    await alignReady(false);
  }
  await alignReady(true);
  // Words past the last window's room (or with no speech to put them in) end the audio, not said.
  const endSeconds = round(windows.at(-1)!.endSeconds);
  for (const word of remaining?.words ?? []) aligned.push({ word: word.word, start: endSeconds, end: endSeconds, confidence: 0 });
  return { words: aligned, language, audioSeconds };
}

/** The first `count` words (fewer past `maxWindowTextCharacters`) as text to force, and the rest, byte ranges re-based. */
function splitForced(
  text: ReturnType<typeof forcedWords>,
  count: number,
): { forced: string; words: ReturnType<typeof forcedWords>['words']; rest: ReturnType<typeof forcedWords> } {
  const bytes = Buffer.from(text.forcedText);
  let taken = 0;
  while (taken < Math.min(count, text.words.length) && text.words[taken]!.endByte - text.words[0]!.startByte < maxWindowTextCharacters)
    taken++;
  const slice = (from: number, to: number): ReturnType<typeof forcedWords> => {
    if (from >= to) return { forcedText: '', words: [] };
    const first = text.words[from]!.startByte;
    // A leading space, as Whisper writes a text's first word.
    return {
      forcedText: ` ${bytes.subarray(first, text.words[to - 1]!.endByte).toString()}`,
      words: text.words.slice(from, to).map((w) => ({ word: w.word, startByte: w.startByte - first + 1, endByte: w.endByte - first + 1 })),
    };
  };
  const head = slice(0, taken);
  return { forced: head.forcedText, words: head.words, rest: slice(taken, text.words.length) };
}

const round = (seconds: number): number => Math.round(seconds * 1000) / 1000;

/**
 * Forced alignment (POST /v1/audio/align): the time of every word of a given text in the audio. Whisper is made to say
 * the text (teacher-forced greedy decoding, native/whisper-addon's forcedText) and its cross-attention DTW, the one the
 * transcription runs, times each token; a word's confidence is the model's own probability of its tokens before
 * forcing, so words the audio does not say are kept, in order, with a low confidence.
 */
import type { AlignedToken } from './transcriber.js';

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

const round = (seconds: number): number => Math.round(seconds * 1000) / 1000;

/**
 * Key terms (names, jargon) a caller expects in the audio: they bias Whisper's decoding through its prompt, a post-pass
 * snaps near-miss spellings in the transcript to them, and the transcript reports which of them it holds.
 */
import { pinyin } from 'pinyin-pro';
import { VoxError } from '../../core/errors.js';
import type { FoundKeyterm, TranscriptSegment, TranscriptWord } from './formats.js';

export const maxKeyterms = 100;
export const maxKeytermCharacters = 50;

/**
 * The terms of a request: the field repeated (one term each), or one value holding a JSON array of strings or a comma
 * list. Blank entries are dropped and repeats (ignoring case) kept once.
 */
export function parseKeyterms(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  let items: unknown[];
  if (Array.isArray(value)) items = value;
  else if (value.trim().startsWith('[')) {
    try {
      items = JSON.parse(value) as unknown[];
    } catch {
      throw new VoxError('invalid_request', 'keyterms is neither a JSON array of strings nor a comma list.', { param: 'keyterms' });
    }
    if (!Array.isArray(items) || items.some((item) => typeof item !== 'string'))
      throw new VoxError('invalid_request', 'keyterms as JSON must be an array of strings.', { param: 'keyterms' });
  } else items = value.split(',');
  const terms = new Map<string, string>();
  for (const item of items as string[]) {
    const term = item.trim().replace(/\s+/g, ' ');
    if (term === '') continue;
    if ([...term].length > maxKeytermCharacters)
      throw new VoxError(
        'invalid_request',
        `Each key term may have at most ${maxKeytermCharacters} characters: '${term.slice(0, 60)}' is longer.`,
        { param: 'keyterms' },
      );
    if (!terms.has(term.toLowerCase())) terms.set(term.toLowerCase(), term);
  }
  if (terms.size > maxKeyterms)
    throw new VoxError('invalid_request', `At most ${maxKeyterms} key terms are accepted (${terms.size} given).`, { param: 'keyterms' });
  return [...terms.values()];
}

/**
 * Whisper conditions a decoding on at most 223 prompt tokens (half its 448-token text context, less the
 * start-of-previous token); whisper.cpp keeps the end of a longer prompt and drops its start.
 */
export const promptTokenBudget = 223;
/** The terms may take at most half of it, so the previous chunk's text keeps some room. */
const keytermTokenBudget = Math.floor(promptTokenBudget / 2);
/** The prompt as it was before key terms: the caller's prompt and the previous chunk's text, cut to their last characters. */
const plainPromptCharacters = 800;

/**
 * Tokens a text may take, without the model's tokenizer: its UTF-8 bytes over 2. Whisper's tokens hold 2.3 bytes or more
 * on every text measured (whisper.cpp's tokenization with the base model's vocabulary, on the ../shared/eval/asr
 * transcripts in 11 languages: English 4.1-6.0, Chinese 2.4-4.2, Russian 6.2; a list of names and jargon 2.3), so the
 * estimate errs high and the prompt stays within the budget.
 */
export function estimatedTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 2);
}

export interface DecodingPrompt {
  prompt: string;
  /** Terms left out because the budget was spent (still snapped to and reported). */
  omittedKeyterms: number;
}

/**
 * The prompt of one chunk. Without terms: the caller's prompt then the previous chunk's text, their last 800 characters.
 * With terms (faster-whisper's order for its hotwords): the terms first, in the order given, as many as fit in half the
 * budget; then the caller's prompt and the previous chunk's text, their end, in what remains. The list ends without a
 * full stop: a prompt ending in one made Whisper base say a short clip twice over in one segment.
 */
export function decodingPrompt(keyterms: readonly string[], userPrompt: string | undefined, previousText: string): DecodingPrompt {
  const context = [userPrompt, previousText].filter(Boolean).join(' ');
  if (keyterms.length === 0) return { prompt: context.slice(-plainPromptCharacters), omittedKeyterms: 0 };
  const included: string[] = [];
  for (const term of keyterms) {
    if (estimatedTokens([...included, term].join(', ')) > keytermTokenBudget) break;
    included.push(term);
  }
  const terms = included.join(', ');
  let remaining = promptTokenBudget - estimatedTokens(`${terms} `);
  const characters = [...context];
  let start = characters.length;
  while (start > 0 && (remaining -= estimatedTokens(characters[start - 1]!)) >= 0) start--;
  return {
    prompt: [terms, characters.slice(start).join('').trim()].filter(Boolean).join(' '),
    omittedKeyterms: keyterms.length - included.length,
  };
}

/** Shortest stretch (letters and digits) whose immediate repetition inside a chunk counts as saying it twice. */
const minRepeatedCharacters = 8;
/** Edits per character between the two halves of a chunk that still make it one text said twice. */
const halvesDistance = 0.2;

/**
 * Text that says itself twice: the same twice, a stretch of 8 or more letters twice in a row, any stretch three times in
 * a row, or two halves within one edit per 5 characters ("The horizon seems extremely distant. The horizon seems extremely distant.",
 * "业绩,业绩,业绩", "끈은 이리저리 ... 그는 이리저리 ..."). A prompt of terms made Whisper base do that to short chunks
 * (bench: 5 of 19 clips given 17 terms in 9 languages). Speech that really repeats itself matches too; then the chunk is
 * only decoded as without terms.
 */
export function repeatsItself(text: string): boolean {
  const key = [...surfaceKey(text)];
  const same = (a: number, b: number, length: number): boolean => {
    for (let k = 0; k < length; k++) if (key[a + k] !== key[b + k]) return false;
    return true;
  };
  for (let length = 1; 2 * length <= key.length; length++) {
    if (length > 1 && key.length === 2 * length && same(0, length, length)) return true;
    const times = length < minRepeatedCharacters ? 3 : 2;
    for (let i = 0; i + times * length <= key.length; i++) {
      if (length > 1 && same(i, i + length, length) && (times === 2 || same(i, i + 2 * length, length))) return true;
    }
  }
  const half = Math.floor(key.length / 2);
  const slack = Math.ceil(halvesDistance * half);
  for (let split = half - slack; split <= half + slack && key.length >= 2 * minRepeatedCharacters; split++) {
    if (editDistance(key.slice(0, split).join(''), key.slice(split).join('')) <= halvesDistance * Math.min(split, key.length - split))
      return true;
  }
  return false;
}

/** Letters and digits only, lower case: how a term is found in the text (case and punctuation aside). */
function surfaceKey(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');
}

/**
 * What a near miss is measured on: the surface without accents (and Hangul split into its letters), and Chinese
 * characters as toneless pinyin, so a homophone written with other characters (停止 for 停滞) is at distance 0.
 */
function soundKey(text: string, language: string): string {
  const plain = text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');
  if (language !== 'zh') return plain;
  return [...plain].map((c) => (/\p{Script=Han}/u.test(c) ? pinyin(c, { toneType: 'none' }) : c)).join('');
}

const characterCounts = new Int32Array(0x10000);

/** A cheap lower bound of the edit distance: characters the two do not share (as multisets) need an edit each. */
function editLowerBound(a: string, b: string): number {
  for (let i = 0; i < a.length; i++) characterCounts[a.charCodeAt(i)]!++;
  for (let i = 0; i < b.length; i++) characterCounts[b.charCodeAt(i)]!--;
  let unshared = 0;
  for (let i = 0; i < a.length; i++) {
    unshared += Math.abs(characterCounts[a.charCodeAt(i)]!);
    characterCounts[a.charCodeAt(i)] = 0;
  }
  for (let i = 0; i < b.length; i++) {
    unshared += Math.abs(characterCounts[b.charCodeAt(i)]!);
    characterCounts[b.charCodeAt(i)] = 0;
  }
  const common = (a.length + b.length - unshared) / 2;
  return Math.max(a.length, b.length) - common;
}

function editDistance(a: string, b: string): number {
  let previous = Int32Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Int32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1), previous[j]! + 1, current[j - 1]! + 1);
    [previous, current] = [current, previous];
  }
  return previous[b.length]!;
}

/**
 * Snapping rules (see snapKeyterms). Edits allowed: one per 5 letters of the term's sound key, so terms under 5 letters
 * only take case, accents and punctuation ('Rust' never replaces 'just'). Words Whisper was surer of than
 * `snapMaxConfidence` are kept unless they differ from the term only in case, accents and punctuation.
 */
export const snapRules = { lettersPerEdit: 5, snapMaxConfidence: 0.9 };

const clauseEnd = /[,;:!?，。、！？；：]\s*$/u;

interface Candidate {
  segment: number;
  first: number;
  last: number;
  term: string;
  distance: number;
}

/**
 * Replaces runs of words that are a near miss of a key term with the term (its spelling, the run's leading space and
 * trailing punctuation, times and mean confidence). Best matches go first; a word takes part in one replacement. Segment
 * texts are rebuilt from their words where something changed.
 */
export function snapKeyterms(segments: TranscriptSegment[], keyterms: readonly string[], language: string): TranscriptSegment[] {
  const terms = keyterms
    .map((term) => ({ term, surface: surfaceKey(term), sound: soundKey(term, language) }))
    .filter((t) => t.sound.length > 0);
  if (terms.length === 0) return segments;
  const longest = Math.max(...terms.map((t) => t.sound.length + Math.floor(t.sound.length / snapRules.lettersPerEdit)));
  const candidates: Candidate[] = [];
  segments.forEach((segment, s) => {
    const sounds = segment.words.map((w) => soundKey(w.word, language));
    for (let first = 0; first < segment.words.length; first++) {
      let sound = '';
      let surface = '';
      let text = '';
      let confidence = 0;
      for (let last = first; last < segment.words.length; last++) {
        const word = segment.words[last]!;
        // A term does not span a clause break: "商场, 商场" is not "场, 商" misheard.
        if (last > first && (sounds[last - 1] === '' || clauseEnd.test(segment.words[last - 1]!.word))) break;
        sound += sounds[last];
        surface += surfaceKey(word.word);
        text += word.word;
        confidence += word.confidence;
        if (sound.length > longest) break;
        if (sounds[first] === '' || sounds[last] === '') continue;
        const sure = confidence / (last - first + 1) >= snapRules.snapMaxConfidence;
        for (const t of terms) {
          const allowed = Math.floor(t.sound.length / snapRules.lettersPerEdit);
          if (Math.abs(sound.length - t.sound.length) > allowed || (surface === t.surface && text.includes(t.term))) continue;
          if (editLowerBound(sound, t.sound) > allowed) continue;
          const distance = editDistance(sound, t.sound);
          const spellingOnly =
            distance === 0 && surface.normalize('NFKD').replace(/\p{M}/gu, '') === t.surface.normalize('NFKD').replace(/\p{M}/gu, '');
          if (distance <= allowed && (spellingOnly || !sure))
            candidates.push({ segment: s, first, last, term: t.term, distance: distance / t.sound.length });
        }
      }
    }
  });
  if (candidates.length === 0) return segments;
  candidates.sort((a, b) => a.distance - b.distance || a.last - a.first - (b.last - b.first));
  const taken = new Set<string>();
  const chosen = candidates.filter((c) => {
    const words = Array.from({ length: c.last - c.first + 1 }, (_, i) => `${c.segment}:${c.first + i}`);
    if (words.some((w) => taken.has(w))) return false;
    for (const w of words) taken.add(w);
    return true;
  });
  return segments.map((segment, s) => {
    const here = chosen.filter((c) => c.segment === s).sort((a, b) => b.first - a.first);
    if (here.length === 0) return segment;
    const words = [...segment.words];
    for (const c of here) {
      const run = words.slice(c.first, c.last + 1);
      const lead = /^[^\p{L}\p{N}]*/u.exec(run[0]!.word)![0];
      const trail = /[^\p{L}\p{N}]*$/u.exec(run.at(-1)!.word)![0];
      const merged: TranscriptWord = {
        ...run[0]!,
        word: `${lead}${c.term}${trail}`,
        end: run.at(-1)!.end,
        confidence: run.reduce((sum, w) => sum + w.confidence, 0) / run.length,
      };
      words.splice(c.first, run.length, merged);
    }
    return {
      ...segment,
      words,
      text: words
        .map((w) => w.word)
        .join('')
        .trim(),
    };
  });
}

/** Scripts written without spaces: a term may sit inside a longer word there (销售 in 销售额). */
const unspacedScript =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Myanmar}\p{Script=Khmer}]/u;

/**
 * The key terms the transcript's words hold (case and punctuation aside), in the order given, with where they are. In
 * spaced scripts a term matches whole words only ('art' is not found in 'party').
 */
export function findKeyterms(segments: TranscriptSegment[], keyterms: readonly string[]): FoundKeyterm[] {
  // Each segment's words as one key, with for each of its characters the word it came from.
  const keyed = segments.map((segment) => {
    let text = '';
    const wordAt: number[] = [];
    const wordStarts = new Set<number>();
    segment.words.forEach((word, i) => {
      const wordKey = surfaceKey(word.word);
      if (wordKey !== '') wordStarts.add(text.length);
      text += wordKey;
      for (let k = 0; k < wordKey.length; k++) wordAt.push(i);
    });
    return { words: segment.words, text, wordAt, wordStarts };
  });
  const found: FoundKeyterm[] = [];
  for (const term of keyterms) {
    const key = surfaceKey(term);
    if (key === '') continue;
    const inWords = unspacedScript.test(term);
    const occurrences: FoundKeyterm['occurrences'] = [];
    for (const { words, text, wordAt, wordStarts } of keyed) {
      for (let at = text.indexOf(key); at >= 0; at = text.indexOf(key, at + 1)) {
        const end = at + key.length;
        if (!inWords && (!wordStarts.has(at) || (end < text.length && !wordStarts.has(end)))) continue;
        occurrences.push({ start: words[wordAt[at]!]!.start, end: words[wordAt[end - 1]!]!.end });
      }
    }
    if (occurrences.length > 0) found.push({ term, count: occurrences.length, occurrences });
  }
  return found;
}

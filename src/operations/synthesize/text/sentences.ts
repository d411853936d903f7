/** Splitting normalised text into sentences and, inside a sentence, into clauses (the units synthesis streams by). */

/**
 * A clause is spoken as a run of its own (to start audio early) only when it is at least this long: a run of a few words is
 * spoken as an utterance of its own and loses its first word on some Kokoro voices (whisper heard "Please leave a message"
 * cut after four words as "Plays leave ..." from af_alloy, am_echo, am_liam, am_onyx and "Play as leave ..." from
 * af_jessica, af_river; the whole sentence in one run was heard right from all of them; the decoder's shortened lead-in and
 * the trimmed leading silence made no difference).
 */
export const minSpokenClauseCharacters = 30;
/** A first sentence up to this long is not cut (a run of at most ~3 s of speech). */
const wholeFirstSentenceCharacters = 48;

const sentenceEnd = /(?<=[.!?…]["'”»)]*)\s+|(?<=[。！？])/u;
const clauseEnd = /(?<=[,;:—–、，；：])\s*/u;

export function splitSentences(text: string): string[] {
  return text
    .split(/\n\s*\n/)
    .flatMap((paragraph) => paragraph.split(sentenceEnd))
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s));
}

export function splitClauses(sentence: string): string[] {
  return sentence
    .split(clauseEnd)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** Text an engine synthesises in one run; one that stops inside a sentence is joined to the next without a pause. */
export interface SpeechPiece {
  text: string;
  endsSentence: boolean;
}

/**
 * Sentences; a long first sentence is cut after a long first clause, so the first audio comes early (see
 * minSpokenClauseCharacters for why a short clause is not).
 */
export function speechPieces(text: string): SpeechPiece[] {
  const sentences = splitSentences(text).map((sentence) => ({ text: sentence, endsSentence: true }));
  const first = sentences[0];
  if (!first || first.text.length <= wholeFirstSentenceCharacters) return sentences;
  const clauses = splitClauses(first.text);
  if (clauses.length < 2 || clauses[0]!.length < minSpokenClauseCharacters) return sentences;
  return [{ text: clauses[0]!, endsSentence: false }, { text: clauses.slice(1).join(' '), endsSentence: true }, ...sentences.slice(1)];
}

/** A sentence end with what closes it, or the end of the text after one. */
const sentenceBoundary = /(?<=[.!?…]["'”»)]*)(?:\s+|$)|(?<=[。！？])/gu;

/** `text` cut where its last sentence ends: the sentences closed, and the one still open at the end (either may be ''). */
export function splitOpenSentence(text: string): [closed: string, open: string] {
  const last = [...text.matchAll(sentenceBoundary)].at(-1);
  if (!last) return ['', text];
  return [text.slice(0, last.index), text.slice(last.index + last[0].length)];
}

/** `text` cut where its first sentence ends: the end of the sentence open at its start, and the rest (either may be ''). */
export function splitFirstSentence(text: string): [first: string, rest: string] {
  const first = [...text.matchAll(sentenceBoundary)][0];
  if (!first) return [text, ''];
  return [text.slice(0, first.index), text.slice(first.index + first[0].length)];
}

/** Whether `text` ends a sentence. */
export const endsSentence = (text: string): boolean => /[.!?…。！？]["'”»)]*\s*$/u.test(text);

/** Pieces of one utterance (text, or phonemes) joined by a space, except before the punctuation that closes what precedes. */
export function joinPieces(pieces: readonly string[]): string {
  let out = '';
  for (const piece of pieces.map((p) => p.trim()).filter((p) => p.length > 0))
    out += out.length === 0 || /^[.,;:!?…)\]}»”’。，！？、；：]/u.test(piece) ? piece : ` ${piece}`;
  return out;
}

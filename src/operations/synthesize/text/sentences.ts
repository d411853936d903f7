/** Splitting normalised text into sentences and, inside a sentence, into clauses (the units synthesis streams by). */

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

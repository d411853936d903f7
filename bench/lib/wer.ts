/** Word and character error rates with a light normalisation (case, punctuation, whitespace). */

/** Languages scored by characters (no spaces between words). */
export const characterLanguages = new Set(['zh', 'ja', 'ko', 'th', 'lo', 'my', 'km', 'yue']);

export function normalizeText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\p{P}\p{S}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Spellings whisper writes for one word, mapped to one form. */
const sameWord: Record<string, string> = { ok: 'okay' };

/** The first word of a text after normalisation ('' for none), one spelling per word. */
export function firstWord(text: string): string {
  const word = normalizeText(text).split(' ')[0] ?? '';
  return sameWord[word] ?? word;
}

function editDistance(reference: string[], hypothesis: string[]): number {
  let previous = Array.from({ length: hypothesis.length + 1 }, (_, j) => j);
  for (let i = 1; i <= reference.length; i++) {
    const current = [i];
    for (let j = 1; j <= hypothesis.length; j++) {
      const substitution = previous[j - 1]! + (reference[i - 1] === hypothesis[j - 1] ? 0 : 1);
      current.push(Math.min(substitution, previous[j]! + 1, current[j - 1]! + 1));
    }
    previous = current;
  }
  return previous[hypothesis.length]!;
}

export interface ErrorRate {
  errors: number;
  referenceLength: number;
  rate: number;
}

/** WER, or CER for character languages. */
export function errorRate(reference: string, hypothesis: string, language: string): ErrorRate {
  const byCharacter = characterLanguages.has(language);
  const split = (text: string): string[] =>
    byCharacter ? [...normalizeText(text).replace(/\s/g, '')] : normalizeText(text).split(' ').filter(Boolean);
  const ref = split(reference);
  const hyp = split(hypothesis);
  const errors = editDistance(ref, hyp);
  return { errors, referenceLength: ref.length, rate: ref.length === 0 ? (hyp.length === 0 ? 0 : 1) : errors / ref.length };
}

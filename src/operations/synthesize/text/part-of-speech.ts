/**
 * Parts of speech of English words, for the lexicon entries that are read differently by them ("close" the verb /klOz/,
 * the adjective /klOs/). Kokoro learnt English from misaki, which tags with spaCy and keys those entries by Penn tags
 * (VBD, VBN, VBP) or their parents (VERB, NOUN, ADJ, ADV); compromise's tags are mapped onto those keys. Its
 * determiners are left out: it calls every "that" one, where spaCy (and so Kokoro's training) tells the stressed
 * demonstrative from the conjunction.
 */
import nlp from 'compromise';

/** The lexicon keys an English word's tag can pick, most specific first (misaki's lookup order). */
export type PartOfSpeech = 'VBD' | 'VBN' | 'VBP' | 'VB' | 'NOUN' | 'ADJ' | 'ADV';

/** A tagged word: its characters [start, end) in the text. */
export interface TaggedWord {
  start: number;
  end: number;
  tag: PartOfSpeech;
}

interface CompromiseTerm {
  tags: string[];
  offset: { start: number; length: number };
}

function partOfSpeech(tags: ReadonlySet<string>): PartOfSpeech | undefined {
  if (tags.has('Verb')) {
    if (tags.has('PastTense')) return 'VBD';
    if (tags.has('Participle') || tags.has('PerfectTense')) return 'VBN';
    // An infinitive or imperative is spaCy's VB; only a finite present form is VBP.
    if (tags.has('Infinitive') || tags.has('Imperative')) return 'VB';
    if (tags.has('PresentTense')) return 'VBP';
    return 'VB';
  }
  if (tags.has('Pronoun')) return undefined;
  if (tags.has('Noun')) return 'NOUN';
  if (tags.has('Adjective')) return 'ADJ';
  if (tags.has('Adverb')) return 'ADV';
  return undefined;
}

/** The words of `text` that have a part of speech the lexicon can use, in order. */
export function tagEnglish(text: string): TaggedWord[] {
  const sentences = nlp(text).json({ offset: true, terms: { offset: true } }) as Array<{ terms: CompromiseTerm[] }>;
  return sentences.flatMap((sentence) =>
    sentence.terms.flatMap((term): TaggedWord[] => {
      const tag = partOfSpeech(new Set(term.tags));
      // A contraction's implied word ("n't" of "don't") has no characters of its own.
      if (!tag || term.offset.length === 0) return [];
      return [{ start: term.offset.start, end: term.offset.start + term.offset.length, tag }];
    }),
  );
}

/** The key misaki falls back to when an entry has no reading for the exact tag. */
export function parentPartOfSpeech(tag: PartOfSpeech): string {
  return tag.startsWith('VB') ? 'VERB' : tag;
}

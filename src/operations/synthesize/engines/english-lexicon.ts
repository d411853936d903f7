/**
 * English words as Kokoro v1.0 learnt to read them: misaki's pronunciation lexicons (gold, then silver; US or GB), the
 * source of Kokoro's English training phonemes, already in Kokoro's letters (diphthongs as A I O W Y Q, ᵻ, ᵊ, stress
 * marks). espeak-ng reads only what the lexicons do not know; its IPA differs in ways Kokoro hears (espeak says
 * "dˈaʊntaʊn" where the lexicon has "dˌWntˈWn", and whisper heard af_jessica's "downtown tonight" as "downed on
 * tonight's").
 * What a dictionary cannot say alone follows misaki's rules: articles, "to" and "the" by the sound that follows,
 * capitalised and all-caps words, acronyms spelt out, and -s, -ed, -ing of a known stem. Entries that differ by part of
 * speech ("close", "read", "use") take the reading of the word's tag (text/part-of-speech.ts), else the default.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { type PartOfSpeech, parentPartOfSpeech } from '../text/part-of-speech.js';

export type EnglishDialect = 'us' | 'gb';
type Entry = string | Record<string, string | null>;

/** The lexicon files of the misaki-lexicon model, per dialect. */
const englishLexiconFiles = (dialect: EnglishDialect): string[] => [`${dialect}_gold.json`, `${dialect}_silver.json`];

const primaryStress = 'ˈ';
const secondaryStress = 'ˌ';
const vowels = new Set('AIOQWYaiuæɑɒɔəɛɜɪʊʌᵻ');
const consonants = new Set('bdfhjklmnpstvwzðŋɡɹɾʃʒʤʧθ');
/** Clause punctuation: what follows a word there is not a sound it runs into. */
const clausePunctuation = new Set(';:,.!?—…');
/** American flapped t follows these sounds (misaki's -ed and -ing rules). */
const flapsAfter = new Set('AIOWYiuæɑəɛɪɹʊʌ');
/** Letters and the two marks lexicon keys may contain. */
const lexiconWord = /^(?=.*[A-Za-z])[A-Za-z'-]+$/;

/**
 * How the next word begins: with a vowel, a consonant, or nothing it runs into (end of a clause, or unknown). The
 * reading of "the", "to", "an" and words the lexicon marks for the end of a phrase depend on it.
 */
export type FollowingSound = 'vowel' | 'consonant' | undefined;

export function followingSound(phonemes: string | undefined, after: FollowingSound = undefined): FollowingSound {
  for (const ch of phonemes ?? '') {
    if (vowels.has(ch)) return 'vowel';
    if (consonants.has(ch)) return 'consonant';
    if (clausePunctuation.has(ch)) return undefined;
  }
  // No sound that tells ("a" is ɐ): what follows these phonemes decides.
  return after;
}

export class EnglishLexicon {
  private constructor(
    private readonly dialect: EnglishDialect,
    private readonly gold: Map<string, Entry>,
    private readonly silver: Map<string, Entry>,
  ) {}

  static async load(dir: string, dialect: EnglishDialect): Promise<EnglishLexicon> {
    const [gold, silver] = await Promise.all(
      englishLexiconFiles(dialect).map(
        async (file) => new Map(Object.entries(JSON.parse(await readFile(path.join(dir, file), 'utf8')) as Record<string, Entry>)),
      ),
    );
    return new EnglishLexicon(dialect, gold!, silver!);
  }

  /** Whether the lexicon can read the word (with its rules), whatever follows it. */
  knows(word: string): boolean {
    return this.word(word, undefined) !== undefined;
  }

  /** The word's phonemes in Kokoro's letters, or undefined when the lexicon does not know it. */
  word(raw: string, next: FollowingSound, tag?: PartOfSpeech): string | undefined {
    const word = raw.normalize('NFKC').replace(/[‘’]/g, "'");
    if (!lexiconWord.test(word)) return undefined;
    const special = this.specialCase(word, next);
    if (special !== undefined) return special;
    // Capitalised words are read with a little stress (misaki's 0.5), all-caps ones with full stress (2).
    const stress = word === word.toLowerCase() ? undefined : word === word.toUpperCase() ? 2 : 0.5;
    let key = word;
    const lower = word.toLowerCase();
    const plainCase = word === word.toUpperCase() || word.slice(1) === word.slice(1).toLowerCase();
    if (word.length > 1 && word !== lower && plainCase && !this.has(word) && (this.has(lower) || this.stemmed(lower, next) !== undefined))
      key = lower;
    const phonemes = this.known(key) ? this.lookup(key, next, tag) : this.stemmed(key, next, tag);
    return phonemes === undefined ? undefined : finish(applyStress(phonemes, stress));
  }

  private specialCase(word: string, next: FollowingSound): string | undefined {
    switch (word) {
      case 'a':
      case 'A':
        return 'ɐ';
      case 'an':
      case 'An':
        return 'ɐn';
      case 'I':
        return `${secondaryStress}I`;
      case 'the':
      case 'The':
        return next === 'vowel' ? 'ði' : 'ðə';
      case 'to':
      case 'To':
        return next === undefined ? this.plain('to') : next === 'vowel' ? 'tʊ' : 'tə';
      case 'in':
      case 'In':
        return next === undefined ? `${primaryStress}ɪn` : 'ɪn';
      case 'am':
        return next === undefined ? this.plain('am') : 'ɐm';
      default:
        return undefined;
    }
  }

  private plain(word: string): string | undefined {
    const entry = this.gold.get(word);
    return typeof entry === 'string' ? entry : (entry?.DEFAULT ?? undefined);
  }

  /** An entry under the word as written, or under its lower-case or capitalised form (misaki grows its lexicon so). */
  private entry(lexicon: Map<string, Entry>, word: string): Entry | undefined {
    const exact = lexicon.get(word);
    if (exact !== undefined || word.length < 2) return exact;
    const lower = word.toLowerCase();
    if (word === lower) return lexicon.get(word[0]!.toUpperCase() + word.slice(1));
    if (word === lower[0]!.toUpperCase() + lower.slice(1)) return lexicon.get(lower);
    return undefined;
  }

  private has(word: string): boolean {
    return this.entry(this.gold, word) !== undefined || this.entry(this.silver, word) !== undefined;
  }

  /** misaki's is_known: in a lexicon, a single letter, or an all-caps word (read as a word or spelt out). */
  private known(word: string): boolean {
    if (this.has(word)) return true;
    if (!lexiconWord.test(word)) return false;
    if (word.length === 1) return true;
    if (word === word.toUpperCase() && this.entry(this.gold, word.toLowerCase()) !== undefined) return true;
    return word.slice(1) === word.slice(1).toUpperCase();
  }

  private lookup(word: string, next: FollowingSound, tag: PartOfSpeech | undefined): string | undefined {
    // An all-caps word the gold lexicon does not list is read as the lower-case word, or spelt out.
    const key = word === word.toUpperCase() && this.entry(this.gold, word) === undefined ? word.toLowerCase() : word;
    let entry = this.entry(this.gold, key) ?? this.entry(this.silver, key);
    if (entry !== undefined && typeof entry !== 'string') {
      const readings = entry;
      // misaki reads "used" by its tag only before "to" ("used to" /jˈust/), which a tag alone cannot tell.
      const byTag = tag === undefined || key === 'used' ? undefined : (readings[tag] ?? readings[parentPartOfSpeech(tag)]);
      entry = (next === undefined && 'None' in readings ? readings.None : (byTag ?? readings.DEFAULT)) ?? undefined;
    }
    return entry ?? this.spelt(word);
  }

  /** Letter by letter, the last letter stressed (an acronym: "USB"). */
  private spelt(word: string): string | undefined {
    const letters = [...word].filter((ch) => /[A-Za-z]/.test(ch)).map((ch) => this.entry(this.gold, ch.toUpperCase()));
    if (letters.some((l) => typeof l !== 'string')) return undefined;
    const joined = applyStress(letters.join(''), 0);
    const last = joined.lastIndexOf(secondaryStress);
    return last < 0 ? joined : joined.slice(0, last) + primaryStress + joined.slice(last + 1);
  }

  /** -s, -ed or -ing of a word the lexicon knows. */
  private stemmed(word: string, next: FollowingSound, tag?: PartOfSpeech): string | undefined {
    const british = this.dialect === 'gb';
    const reduced = british ? 'ɪ' : 'ᵻ';
    const stem = (candidate: string): string | undefined => (this.known(candidate) ? this.lookup(candidate, next, tag) : undefined);
    if (word.length >= 3 && word.endsWith('s')) {
      const base =
        (!word.endsWith('ss') && stem(word.slice(0, -1))) ||
        ((word.endsWith("'s") || (word.length > 4 && word.endsWith('es') && !word.endsWith('ies'))) && stem(word.slice(0, -2))) ||
        (word.length > 4 && word.endsWith('ies') && stem(`${word.slice(0, -3)}y`)) ||
        undefined;
      if (base) return /[ptkfθ]$/.test(base) ? `${base}s` : /[szʃʒʧʤ]$/.test(base) ? `${base}${reduced}z` : `${base}z`;
    }
    if (word.length >= 4 && word.endsWith('d')) {
      const base =
        (!word.endsWith('dd') && stem(word.slice(0, -1))) ||
        (word.length > 4 && word.endsWith('ed') && !word.endsWith('eed') && stem(word.slice(0, -2))) ||
        undefined;
      if (base) {
        if (/[pkfθʃsʧ]$/.test(base)) return `${base}t`;
        if (base.endsWith('d')) return `${base}${reduced}d`;
        if (!base.endsWith('t')) return `${base}d`;
        if (british || base.length < 2) return `${base}ɪd`;
        return flapsAfter.has(base.at(-2)!) ? `${base.slice(0, -1)}ɾᵻd` : `${base}ᵻd`;
      }
    }
    if (word.length >= 5 && word.endsWith('ing')) {
      const base =
        (word.length > 5 && stem(word.slice(0, -3))) ||
        stem(`${word.slice(0, -3)}e`) ||
        (word.length > 5 && /([bcdgklmnprstvxz])\1ing$|cking$/.test(word) && stem(word.slice(0, -4))) ||
        undefined;
      if (base) {
        if (british) return /[əː]$/.test(base) ? undefined : `${base}ɪŋ`;
        return base.length > 1 && base.endsWith('t') && flapsAfter.has(base.at(-2)!) ? `${base.slice(0, -1)}ɾɪŋ` : `${base}ɪŋ`;
      }
    }
    return undefined;
  }
}

/**
 * misaki's stress adjustment: below -1 removes stress, -1 (or 0 on a stressed word) lowers primary to secondary, 0.5-1 adds
 * secondary stress to an unstressed word, 1+ raises secondary to primary, above 1 adds primary stress to an unstressed one.
 * An added mark goes before the first vowel.
 */
function applyStress(phonemes: string, stress: number | undefined): string {
  const hasPrimary = phonemes.includes(primaryStress);
  const hasStress = hasPrimary || phonemes.includes(secondaryStress);
  const hasVowel = [...phonemes].some((ch) => vowels.has(ch));
  if (stress === undefined) return phonemes;
  if (stress < -1) return phonemes.replaceAll(primaryStress, '').replaceAll(secondaryStress, '');
  if (stress === -1 || ((stress === 0 || stress === -0.5) && hasPrimary))
    return phonemes.replaceAll(secondaryStress, '').replaceAll(primaryStress, secondaryStress);
  if ((stress === 0 || stress === 0.5 || stress === 1) && !hasStress)
    return hasVowel ? markBeforeFirstVowel(phonemes, secondaryStress) : phonemes;
  if (stress >= 1 && !hasPrimary && hasStress) return phonemes.replaceAll(secondaryStress, primaryStress);
  if (stress > 1 && !hasStress) return hasVowel ? markBeforeFirstVowel(phonemes, primaryStress) : phonemes;
  return phonemes;
}

function markBeforeFirstVowel(phonemes: string, mark: string): string {
  const chars = [...phonemes];
  const first = chars.findIndex((ch) => vowels.has(ch));
  return [...chars.slice(0, first), mark, ...chars.slice(first)].join('');
}

/** Kokoro v1.0 reads a flap as T and a glottal stop as t (misaki writes them so for v1.0). */
const finish = (phonemes: string): string => phonemes.replaceAll('ɾ', 'T').replaceAll('ʔ', 't');

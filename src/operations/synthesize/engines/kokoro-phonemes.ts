/**
 * Text -> Kokoro v1.0 phoneme strings.
 *
 * English words come from misaki's lexicons where they know them (english-lexicon.ts). The other English words, and
 * Spanish, French, Italian, Portuguese and Hindi, come from espeak-ng IPA. Kokoro's English was trained on misaki's
 * inventory, so English IPA is mapped the way misaki maps espeak output: diphthongs to single letters
 * (eɪ A, aɪ I, aʊ W, oʊ O, ɔɪ Y, British əʊ Q), affricates to ʤ ʧ, r -> ɹ, x/ç -> k, ɐ -> ə, ɬ -> l, syllabic l -> ᵊl,
 * glottal stops to t, American flaps to T and ɚ to əɹ with length marks dropped. Other languages keep espeak's IPA
 * (ties removed).
 * Mandarin: pinyin (pinyin-pro, with its tone sandhi) -> IPA with misaki's tone arrows (1 →, 2 ↗, 3 ↓, 4 ↘) and its
 * affricate letters (ʦ ʨ ꭧ). Japanese: kuromoji (IPA dictionary) gives each word's pronunciation in katakana (particles
 * as spoken: は -> ワ, long vowels as ー), espeak-ng turns the kana into IPA, which is mapped to Kokoro's Japanese
 * letters (ʦ ʨ ʥ, long vowels with ː, no stress marks).
 * Punctuation Kokoro knows is kept as tokens (it shapes pauses and intonation); CJK punctuation maps to the ASCII form.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import kuromoji from 'kuromoji';
import { pinyin } from 'pinyin-pro';
import { type EnglishDialect, type EnglishLexicon, type FollowingSound, followingSound } from './english-lexicon.js';
import { type PartOfSpeech, tagEnglish } from '../text/part-of-speech.js';
import { phonemize } from './espeak-ng.js';

/** espeak-ng voice per Kokoro language. */
export const kokoroEspeakVoices: Record<string, string> = {
  'en-us': 'en-us',
  'en-gb': 'en-gb',
  es: 'es',
  fr: 'fr-fr',
  it: 'it',
  'pt-br': 'pt-br',
  hi: 'hi',
  ja: 'ja',
};

const punctuation = /([;:,.!?—…"()“”]+)/u;
const cjkPunctuation: Record<string, string> = {
  '、': ',',
  '。': '.',
  '！': '!',
  '？': '?',
  '，': ',',
  '：': ':',
  '；': ';',
  '「': '“',
  '」': '”',
  '『': '“',
  '』': '”',
  '（': '(',
  '）': ')',
  '¡': '',
  '¿': '',
  '«': '“',
  '»': '”',
  '–': '—',
};

/** Longest first, so `o^ʊ` wins over `o`. */
const englishCommon: Array<[string, string]> = [
  ['ʔˌn̩', 'tᵊn'],
  ['ʔn̩', 'tᵊn'],
  ['ʔn', 'tᵊn'],
  ['ə^l', 'ᵊl'],
  ['l̩', 'ᵊl'],
  ['a^ɪ', 'I'],
  ['a^ʊ', 'W'],
  ['d^ʒ', 'ʤ'],
  ['t^ʃ', 'ʧ'],
  ['e^ɪ', 'A'],
  ['ɔ^ɪ', 'Y'],
  ['ʔ', 't'],
  ['r', 'ɹ'],
  ['x', 'k'],
  ['ç', 'k'],
  ['ɐ', 'ə'],
  ['ɬ', 'l'],
  ['ʲ', ''],
  ['e', 'A'],
];
const american: Array<[string, string]> = [
  ['o^ʊ', 'O'],
  ['ɜːɹ', 'ɜɹ'],
  ['ɜː', 'ɜɹ'],
  ['ɪ^ə', 'iə'],
  ['ɚ', 'əɹ'],
  ['ɾ', 'T'],
  ['ː', ''],
];
const british: Array<[string, string]> = [
  ['ə^ʊ', 'Q'],
  ['e^ə', 'ɛː'],
  ['ɪ^ə', 'ɪə'],
  ['o^ʊ', 'Q'],
];

export interface PhonemeOptions {
  signal?: AbortSignal;
  /** Kokoro's English lexicons (misaki): English words they know are read from them, the rest by espeak-ng. */
  lexicons?: Partial<Record<EnglishDialect, EnglishLexicon>>;
}

/** The phoneme string Kokoro reads for `text` (already normalised) in `language`. */
export async function kokoroPhonemes(text: string, language: string, options: PhonemeOptions = {}): Promise<string> {
  const cleaned = [...text].map((ch) => cjkPunctuation[ch] ?? ch).join('');
  if (language === 'zh') return mandarinPhonemes(cleaned, options);
  const input = language === 'ja' ? await japanesePronunciation(cleaned) : cleaned;
  return (await espeakPhonemes([input], language, options))[0]!;
}

/**
 * Phonemes of several texts through one espeak-ng run: punctuation stays; in English, words the lexicon knows come from
 * it and each stretch of words it does not know goes to espeak-ng (with its context); elsewhere each stretch between
 * punctuation goes to espeak-ng whole.
 */
async function espeakPhonemes(texts: string[], language: string, options: PhonemeOptions): Promise<string[]> {
  const voice = kokoroEspeakVoices[language];
  if (!voice) throw new Error(`Kokoro has no phonemiser for '${language}'`);
  const lexicon = language === 'en-us' ? options.lexicons?.us : language === 'en-gb' ? options.lexicons?.gb : undefined;
  // A stretch is either one lexicon word (with its part of speech, where the tagger gives one) or words for espeak-ng.
  type Stretch = { word: string; tag: PartOfSpeech | undefined } | { espeak: string };
  const split = texts.map((text) => {
    const parts = text.split(punctuation);
    const tags = lexicon ? new Map(tagEnglish(text).map((t) => [`${t.start}:${t.end}`, t.tag])) : undefined;
    let partStart = 0;
    const stretches = parts.map((part, i): Stretch[] => {
      const offset = partStart;
      partStart += part.length;
      if (i % 2 === 1 || !/[\p{L}\p{N}]/u.test(part)) return [];
      if (!lexicon) return [{ espeak: part }];
      const out: Stretch[] = [];
      for (const match of part.matchAll(/\S+/g)) {
        const word = match[0];
        const last = out.at(-1);
        // The tagger's word is the written word without the quotes or marks around it.
        const core = /[\p{L}\p{N}](?:.*[\p{L}\p{N}])?/u.exec(word);
        const start = offset + match.index + (core?.index ?? 0);
        const tag = core ? tags?.get(`${start}:${start + core[0].length}`) : undefined;
        if (lexicon.knows(word)) out.push({ word, tag });
        else if (last && 'espeak' in last) last.espeak += ` ${word}`;
        else out.push({ espeak: word });
      }
      return out;
    });
    return { parts, stretches };
  });
  const ipa = await phonemize(
    split.flatMap(({ stretches }) => stretches.flat().flatMap((s) => ('espeak' in s ? [s.espeak] : []))),
    voice,
    options.signal,
  );
  let next = 0;
  return split.map(({ parts, stretches }) => {
    const out = parts.map((part, i) => (i % 2 === 1 ? part : /\s/.test(part) ? ' ' : ''));
    stretches.forEach((partStretches, partIndex) => {
      if (partStretches.length === 0) return;
      const phonemes = partStretches.map((s) => ('espeak' in s ? fixUp(ipa[next++]!, language) : ''));
      // Lexicon words last to first: "the", "to", "an" read by the sound that follows (none at the end of the clause);
      // a word of no telling sound ("a" is ɐ) passes on what follows it, as misaki does.
      let following: FollowingSound;
      for (let i = partStretches.length - 1; i >= 0; i--) {
        const stretch = partStretches[i]!;
        if ('word' in stretch) phonemes[i] = lexicon!.word(stretch.word, following, stretch.tag) ?? '';
        following = followingSound(phonemes[i], following);
      }
      const leading = /^\s/.test(parts[partIndex]!) && partIndex > 0 ? ' ' : '';
      const trailing = /\s$/.test(parts[partIndex]!) ? ' ' : '';
      out[partIndex] = leading + phonemes.join(' ') + trailing;
    });
    // Punctuation sits on the word before it and is followed by a space, as in Kokoro's training phonemes.
    return out
      .join('')
      .replace(/\s+/g, ' ')
      .replace(/ ([;:,.!?…])/g, '$1')
      .replace(/([;:,!?])(?=[^\s;:,.!?…])/g, '$1 ')
      .trim();
  });
}

/** Multi-letter phonemes written without a tie, tied as espeak-ng writes them (so fixUp maps them). */
const untied = /(a(?=[ɪʊ])|e(?=ɪ)|o(?=ʊ)|ɔ(?=ɪ)|ə(?=ʊ)|t(?=ʃ)|d(?=ʒ))/gu;

/** Kokoro's phonemes for IPA a caller wrote (SSML `<phoneme>`, a dictionary rule), mapped as espeak-ng's IPA is. */
export function kokoroIpa(ipa: string, language: string): string {
  return fixUp(ipa.normalize('NFC').replace(/\^/g, '').replace(untied, '$1^'), language);
}

function fixUp(ipa: string, language: string): string {
  let out = ipa;
  if (language === 'en-us' || language === 'en-gb') {
    for (const [from, to] of [...(language === 'en-us' ? american : british), ...englishCommon]) out = out.split(from).join(to);
  } else if (language === 'ja') {
    out = japaneseLetters(out);
  }
  return out.replace(/\^/g, '').replace(/\u0329|\u032f|\u0361/g, '');
}

/** espeak-ng's Japanese IPA -> the letters Kokoro's Japanese voices were trained with. */
function japaneseLetters(ipa: string): string {
  return ipa
    .replace(/t\^s|ts/g, 'ʦ')
    .replace(/t\^ɕ|tɕ/g, 'ʨ')
    .replace(/d\^ʑ|dʑ|ʑ/g, 'ʥ')
    .replace(/ä/g, 'a')
    .replace(/[\u031e\u031d]/g, '')
    .replace(/[ˈˌ]/g, '')
    .replace(/([aiueoɯ])\1/g, '$1ː');
}

const initials: Array<[string, string]> = [
  ['zh', 'ꭧ'],
  ['ch', 'ꭧʰ'],
  ['sh', 'ʂ'],
  ['b', 'p'],
  ['p', 'pʰ'],
  ['m', 'm'],
  ['f', 'f'],
  ['d', 't'],
  ['t', 'tʰ'],
  ['n', 'n'],
  ['l', 'l'],
  ['g', 'k'],
  ['k', 'kʰ'],
  ['h', 'x'],
  ['j', 'ʨ'],
  ['q', 'ʨʰ'],
  ['x', 'ɕ'],
  ['r', 'ɻ'],
  ['z', 'ʦ'],
  ['c', 'ʦʰ'],
  ['s', 's'],
];
const finals: Record<string, string> = {
  a: 'a',
  o: 'wo',
  e: 'ɤ',
  i: 'i',
  u: 'u',
  v: 'y',
  ai: 'ai',
  ei: 'ei',
  ao: 'au',
  ou: 'ou',
  an: 'an',
  en: 'ən',
  ang: 'aŋ',
  eng: 'əŋ',
  ong: 'ʊŋ',
  er: 'ɚ',
  ia: 'ja',
  ie: 'je',
  iao: 'jau',
  iu: 'jou',
  iou: 'jou',
  ian: 'jɛn',
  in: 'in',
  iang: 'jaŋ',
  ing: 'iŋ',
  iong: 'jʊŋ',
  ua: 'wa',
  uo: 'wo',
  uai: 'wai',
  ui: 'wei',
  uei: 'wei',
  uan: 'wan',
  un: 'wən',
  uen: 'wən',
  uang: 'waŋ',
  ueng: 'wəŋ',
  ve: 'ɥe',
  ue: 'ɥe',
  van: 'ɥɛn',
  vn: 'yn',
};
const tones = ['', '→', '↗', '↓', '↘'];

function syllableIpa(syllable: string): string {
  const match = /^([a-zü]+)([0-5])?$/.exec(syllable.replace(/ü/g, 'v'));
  if (!match) return '';
  let body = match[1]!;
  const tone = tones[Number(match[2] ?? 0)] ?? '';
  // y/w spellings stand for the medials.
  body = body.replace(/^yu/, 'v').replace(/^yi/, 'i').replace(/^y/, 'i').replace(/^wu/, 'u').replace(/^w/, 'u');
  let initial = '';
  for (const [spelling, ipa] of initials) {
    if (body.startsWith(spelling) && body.length > spelling.length) {
      initial = ipa;
      body = body.slice(spelling.length);
      break;
    }
  }
  if (/^[jqx]/.test(match[1]!) || /^[ʨɕ]/.test(initial)) body = body.replace(/^u/, 'v');
  if (body === 'i' && /^(ꭧ|ʂ|ɻ)/.test(initial)) return `${initial}ɻ${tone}`;
  if (body === 'i' && /^(ʦ|s)/.test(initial)) return `${initial}ɹ${tone}`;
  return `${initial}${finals[body] ?? body}${tone}`;
}

async function mandarinPhonemes(text: string, options: PhonemeOptions): Promise<string> {
  const syllables = pinyin(text, { toneType: 'num', type: 'array', nonZh: 'consecutive' });
  const isPinyin = (s: string): boolean => /^[a-zü]+[0-5]$/.test(s);
  const isLatin = (s: string): boolean => !isPinyin(s) && /\p{Script=Latin}/u.test(s);
  // Latin-script words in Chinese text (names, brands, English terms) are read as English instead of dropped.
  const english = await espeakPhonemes(syllables.filter(isLatin), 'en-us', options);
  const out: string[] = [];
  for (const s of syllables) {
    if (isPinyin(s)) out.push(syllableIpa(s));
    else if (isLatin(s)) out.push(` ${english.shift()!} `);
    else if (punctuation.test(s)) out.push(`${s.trim()} `);
    else if (/\s/.test(s)) out.push(' ');
  }
  return out.join('').replace(/\s+/g, ' ').trim();
}

let japaneseTokenizer: Promise<kuromoji.Tokenizer<kuromoji.IpadicFeatures>> | undefined;

/** Katakana pronunciation of Japanese text, word by word (punctuation kept). */
export async function japanesePronunciation(text: string): Promise<string> {
  japaneseTokenizer ??= new Promise((resolve, reject) => {
    const dicPath = path.join(path.dirname(createRequire(import.meta.url).resolve('kuromoji/package.json')), 'dict');
    kuromoji.builder({ dicPath }).build((error, tokenizer) => (error ? reject(error) : resolve(tokenizer)));
  });
  const tokens = (await japaneseTokenizer).tokenize(text);
  return tokens.map((t) => (t.pronunciation && t.pronunciation !== '*' ? t.pronunciation : t.surface_form)).join(' ');
}

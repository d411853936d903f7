/**
 * W3C Pronunciation Lexicon Specification 1.0 documents -> pronunciation rules. A lexeme becomes one rule: its graphemes,
 * and its preferred pronunciation (the `prefer="true"` one, else the first in document order, as PLS says), an `alias`
 * (respelling) or a `phoneme` (in the phoneme's or the lexicon's `alphabet`: ipa or x-sampa). Its language is the
 * lexeme's xml:lang, else the lexicon's. Anything PLS does not allow where it stands is a 400 naming the line.
 */
import { SaxesParser, type SaxesTagNS } from 'saxes';
import { VoxError } from '../core/errors.js';
import type { PronunciationRule } from './contract.js';

export const plsNamespace = 'http://www.w3.org/2005/01/pronunciation-lexicon';
const xmlNamespace = 'http://www.w3.org/XML/1998/namespace';
export const maxRules = 5000;
export const maxGraphemeCharacters = 200;
export const maxPronunciationCharacters = 1000;
export const alphabets = ['ipa', 'x-sampa'] as const;
export type Alphabet = (typeof alphabets)[number];

/** Elements of a lexicon that carry no pronunciation (descriptions, examples): read past. */
const ignoredElements = new Set(['meta', 'metadata', 'example']);

interface Pronunciation {
  kind: 'alias' | 'phoneme';
  text: string;
  alphabet?: Alphabet;
  prefer: boolean;
  line: number;
}

interface Lexeme {
  line: number;
  language: string;
  graphemes: string[];
  pronunciations: Pronunciation[];
}

const invalid = (message: string, line: number, param: string): VoxError =>
  new VoxError('invalid_request', `Invalid PLS lexicon, line ${line}: ${message}`, { param });

/** `ipa`, `x-sampa` (any case), or undefined when absent; another alphabet is a 400. */
function alphabetOf(value: string | undefined, line: number, param: string): Alphabet | undefined {
  if (value === undefined) return undefined;
  const alphabet = value.trim().toLowerCase();
  if ((alphabets as readonly string[]).includes(alphabet)) return alphabet as Alphabet;
  throw invalid(`alphabet '${value}' is not supported; use ${alphabets.join(' or ')}.`, line, param);
}

/** The rules of a PLS document, in the order of its lexemes. */
export function parsePls(document: string, param = 'file'): PronunciationRule[] {
  const parser = new SaxesParser({ xmlns: true, position: true });
  const stack: string[] = [];
  let lexiconAlphabet: Alphabet | undefined;
  let lexiconLanguage: string | undefined;
  let lexeme: Lexeme | undefined;
  /** Text of the grapheme, alias or phoneme being read. */
  let text: { value: string; line: number } | undefined;
  let pronunciationAttributes: { alphabet?: Alphabet; prefer: boolean } | undefined;
  let ignoredDepth = 0;
  const rules: PronunciationRule[] = [];

  const finishLexeme = (current: Lexeme): void => {
    if (current.graphemes.length === 0) throw invalid('a <lexeme> needs at least one <grapheme>.', current.line, param);
    const chosen = current.pronunciations.find((p) => p.prefer) ?? current.pronunciations[0];
    if (!chosen) throw invalid('a <lexeme> needs a <phoneme> or an <alias>.', current.line, param);
    if (rules.length >= maxRules) throw invalid(`a lexicon holds at most ${maxRules} lexemes.`, current.line, param);
    if (chosen.kind === 'alias') {
      rules.push({ kind: 'alias', graphemes: current.graphemes, alias: chosen.text, language: current.language });
      return;
    }
    const alphabet = chosen.alphabet ?? lexiconAlphabet;
    if (!alphabet) throw invalid('a <phoneme> needs an alphabet (on it or on the <lexicon>).', chosen.line, param);
    rules.push({ kind: 'phoneme', graphemes: current.graphemes, phonemes: chosen.text, alphabet, language: current.language });
  };

  parser.on('opentag', (tag: SaxesTagNS) => {
    const line = parser.line;
    const parent = stack.at(-1);
    stack.push(tag.local);
    if (ignoredDepth > 0 || (parent !== undefined && ignoredElements.has(tag.local))) {
      ignoredDepth++;
      return;
    }
    if (tag.uri !== plsNamespace)
      throw invalid(`<${tag.name}> is not a PLS element (the lexicon's namespace is ${plsNamespace}).`, line, param);
    const attribute = (local: string, uri = ''): string | undefined =>
      Object.values(tag.attributes).find((a) => a.local === local && a.uri === uri)?.value;
    const languageValue = attribute('lang', xmlNamespace)?.trim() || undefined;
    switch (`${parent ?? ''}>${tag.local}`) {
      case '>lexicon':
        lexiconAlphabet = alphabetOf(attribute('alphabet'), line, param);
        lexiconLanguage = languageValue;
        return;
      case 'lexicon>lexeme': {
        const lexemeLanguage = languageValue ?? lexiconLanguage;
        if (!lexemeLanguage) throw invalid('the <lexicon> (or each <lexeme>) needs an xml:lang.', line, param);
        lexeme = { line, language: lexemeLanguage, graphemes: [], pronunciations: [] };
        return;
      }
      case 'lexeme>grapheme':
        text = { value: '', line };
        return;
      case 'lexeme>alias':
      case 'lexeme>phoneme':
        text = { value: '', line };
        pronunciationAttributes = {
          ...(tag.local === 'phoneme' ? { alphabet: alphabetOf(attribute('alphabet'), line, param) } : {}),
          prefer: attribute('prefer')?.trim() === 'true',
        };
        return;
      default:
        throw invalid(
          parent === undefined ? `the document is <${tag.name}>, not a PLS <lexicon>.` : `<${tag.name}> is not allowed inside <${parent}>.`,
          line,
          param,
        );
    }
  });

  parser.on('text', (value) => {
    if (ignoredDepth > 0) return;
    if (text) text.value += value;
    else if (value.trim() !== '')
      throw invalid(`text '${value.trim().slice(0, 40)}' is not allowed inside <${stack.at(-1)}>.`, parser.line, param);
  });
  parser.on('cdata', (value) => {
    if (text && ignoredDepth === 0) text.value += value;
  });

  parser.on('closetag', (tag) => {
    stack.pop();
    if (ignoredDepth > 0) {
      ignoredDepth--;
      return;
    }
    if (tag.local === 'lexeme' && lexeme) {
      finishLexeme(lexeme);
      lexeme = undefined;
      return;
    }
    if (!text || !lexeme) return;
    const value = text.value.trim();
    if (value === '') throw invalid(`<${tag.local}> is empty.`, text.line, param);
    if (tag.local === 'grapheme') {
      if ([...value].length > maxGraphemeCharacters)
        throw invalid(`a <grapheme> has at most ${maxGraphemeCharacters} characters.`, text.line, param);
      lexeme.graphemes.push(value.replace(/\s+/g, ' '));
    } else {
      if ([...value].length > maxPronunciationCharacters)
        throw invalid(`an <${tag.local}> has at most ${maxPronunciationCharacters} characters.`, text.line, param);
      lexeme.pronunciations.push({
        kind: tag.local === 'alias' ? 'alias' : 'phoneme',
        text: value,
        ...(pronunciationAttributes?.alphabet ? { alphabet: pronunciationAttributes.alphabet } : {}),
        prefer: pronunciationAttributes?.prefer ?? false,
        line: text.line,
      });
    }
    text = undefined;
    pronunciationAttributes = undefined;
  });

  try {
    parser.write(document).close();
  } catch (error) {
    if (error instanceof VoxError) throw error;
    // saxes reports "line:column: reason" (with a file name first when given one).
    const message = error instanceof Error ? error.message : String(error);
    const position = /^(\d+):(\d+): (.*)$/s.exec(message);
    throw position
      ? invalid(`${position[3]!.trim()} (column ${position[2]}).`, Number(position[1]), param)
      : invalid(message, parser.line, param);
  }
  if (rules.length === 0) throw invalid('the lexicon has no <lexeme>.', parser.line, param);
  return rules;
}

/**
 * Phoneme alphabets: X-SAMPA (SSML's and PLS's `x-sampa`) to IPA, and IPA to espeak-ng's phoneme mnemonics (its
 * `[[...]]` input), so every engine reads the phonemes of `<phoneme>` and of dictionary rules.
 */

/** X-SAMPA symbols longest first (the ASCII rendering of IPA; the table covers the symbols of the standard). */
const xsampa: Array<[string, string]> = [
  ['_<', '\u02bc'],
  ['r\\`', 'ɻ'],
  ['d`', 'ɖ'],
  ['l`', 'ɭ'],
  ['n`', 'ɳ'],
  ['r`', 'ɽ'],
  ['s`', 'ʂ'],
  ['t`', 'ʈ'],
  ['z`', 'ʐ'],
  ['@\\', 'ɘ'],
  ['3\\', 'ɞ'],
  ['?\\', 'ʕ'],
  ['B\\', 'ʙ'],
  ['G\\', 'ɢ'],
  ['H\\', 'ʜ'],
  ['I\\', 'ᵻ'],
  ['J\\', 'ɟ'],
  ['K\\', 'ɮ'],
  ['L\\', 'ʟ'],
  ['M\\', 'ɰ'],
  ['N\\', 'ɴ'],
  ['O\\', 'ʘ'],
  ['R\\', 'ʀ'],
  ['U\\', 'ᵿ'],
  ['X\\', 'ħ'],
  ['h\\', 'ɦ'],
  ['j\\', 'ʝ'],
  ['l\\', 'ɺ'],
  ['p\\', 'ɸ'],
  ['r\\', 'ɹ'],
  ['s\\', 'ɕ'],
  ['v\\', 'ʋ'],
  ['x\\', 'ɧ'],
  ['z\\', 'ʑ'],
  ['{', 'æ'],
  ['}', 'ʉ'],
  ['1', 'ɨ'],
  ['2', 'ø'],
  ['3', 'ɜ'],
  ['4', 'ɾ'],
  ['5', 'ɫ'],
  ['6', 'ɐ'],
  ['7', 'ɤ'],
  ['8', 'ɵ'],
  ['9', 'œ'],
  ['&', 'ɶ'],
  ['?', 'ʔ'],
  ['@', 'ə'],
  ['A', 'ɑ'],
  ['B', 'β'],
  ['C', 'ç'],
  ['D', 'ð'],
  ['E', 'ɛ'],
  ['F', 'ɱ'],
  ['G', 'ɣ'],
  ['H', 'ɥ'],
  ['I', 'ɪ'],
  ['J', 'ɲ'],
  ['K', 'ɬ'],
  ['L', 'ʎ'],
  ['M', 'ɯ'],
  ['N', 'ŋ'],
  ['O', 'ɔ'],
  ['P', 'ʋ'],
  ['Q', 'ɒ'],
  ['R', 'ʁ'],
  ['S', 'ʃ'],
  ['T', 'θ'],
  ['U', 'ʊ'],
  ['V', 'ʌ'],
  ['W', 'ʍ'],
  ['X', 'χ'],
  ['Y', 'ʏ'],
  ['Z', 'ʒ'],
  ['"', 'ˈ'],
  ['%', 'ˌ'],
  [':\\', 'ˑ'],
  [':', 'ː'],
  ['_0', '\u0325'],
  ['_h', 'ʰ'],
  ['_j', 'ʲ'],
  ['_w', 'ʷ'],
  ['~', '\u0303'],
  ['=', '\u0329'],
  ['.', '.'],
];

export function xsampaToIpa(xsampaText: string): string {
  let out = '';
  let i = 0;
  while (i < xsampaText.length) {
    const match = xsampa.find(([from]) => xsampaText.startsWith(from, i));
    if (match) {
      out += match[1];
      i += match[0].length;
    } else {
      out += xsampaText[i];
      i++;
    }
  }
  return out;
}

/**
 * IPA -> espeak-ng mnemonics (its phoneme tables use Kirshenbaum-like names: `ɛ` E, `ʃ` S, diphthongs as two letters).
 * Longest first; symbols espeak-ng spells as IPA's ASCII letters pass through.
 */
const espeakMnemonics: Array<[string, string]> = [
  ['tʃ', 'tS'],
  ['dʒ', 'dZ'],
  ['eɪ', 'eI'],
  ['aɪ', 'aI'],
  ['aʊ', 'aU'],
  ['oʊ', 'oU'],
  ['əʊ', 'oU'],
  ['ɔɪ', 'OI'],
  ['ɪə', 'i@'],
  ['ɛə', 'e@'],
  ['ʊə', 'U@'],
  ['ɑː', 'A:'],
  ['ɜː', '3:'],
  ['ɚ', '3'],
  ['ɝ', '3:'],
  ['ɹ', 'r'],
  ['ɾ', 't'],
  ['ɛ', 'E'],
  ['æ', 'a'],
  ['ɑ', 'A:'],
  ['ɒ', '0'],
  ['ɔ', 'O'],
  ['ə', '@'],
  ['ɐ', 'a#'],
  ['ɪ', 'I'],
  ['ʊ', 'U'],
  ['ʌ', 'V'],
  ['ɜ', '3:'],
  ['θ', 'T'],
  ['ð', 'D'],
  ['ʃ', 'S'],
  ['ʒ', 'Z'],
  ['ŋ', 'N'],
  ['ɡ', 'g'],
  ['ç', 'C'],
  ['χ', 'X'],
  ['ʁ', 'R'],
  ['ɲ', 'n^'],
  ['ʎ', 'l^'],
  ['ø', 'Y'],
  ['œ', 'W'],
  ['y', 'y'],
  ['ʔ', '?'],
  ['ɫ', 'l'],
  ['ˈ', "'"],
  ['ˌ', ','],
  ['ː', ':'],
  ['ʰ', ''],
  ['.', ''],
];

const ipaVowel = /[aeiouyæɑɒɐɔəɘɚɛɜɝɞɤɨɪɯɵøœɶʉʊʌʏ]/u;

/**
 * A word's IPA with a primary stress before its first vowel when it has no stress mark: engines phonemised by espeak-ng
 * were trained on stressed IPA (Piper said an unstressed /bɹɛd/ as "great", stressed as "bread").
 */
export function withStress(ipa: string): string {
  if (/[ˈˌ]/u.test(ipa)) return ipa;
  const first = ipa.search(ipaVowel);
  return first < 0 ? ipa : `${ipa.slice(0, first)}ˈ${ipa.slice(first)}`;
}

/** espeak-ng's `[[...]]` phoneme input for IPA (symbols it has no name for are left out; stressed as withStress). */
export function ipaToEspeak(ipa: string): string {
  const text = withStress(ipa.normalize('NFC'));
  let out = '';
  let i = 0;
  while (i < text.length) {
    const match = espeakMnemonics.find(([from]) => text.startsWith(from, i));
    if (match) {
      out += match[1];
      i += match[0].length;
      continue;
    }
    const ch = text[i]!;
    if (/[a-z ]/u.test(ch)) out += ch;
    i++;
  }
  // The space after `]]` keeps espeak-ng's SSML reader from reading a closing tag that follows as words.
  return `[[${out.trim()}]] `;
}

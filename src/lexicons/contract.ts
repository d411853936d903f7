/** One rule of a pronunciation dictionary (a W3C PLS lexeme), as synthesis applies it. */
export type PronunciationRule =
  | {
      readonly kind: 'alias';
      /** Written forms matched case-sensitively as whole words. */
      readonly graphemes: readonly string[];
      readonly alias: string;
      /** BCP-47 tag from the lexicon's or lexeme's xml:lang; the rule applies where the primary subtag matches. */
      readonly language: string;
    }
  | {
      readonly kind: 'phoneme';
      readonly graphemes: readonly string[];
      readonly phonemes: string;
      readonly alphabet: 'ipa' | 'x-sampa';
      readonly language: string;
    };

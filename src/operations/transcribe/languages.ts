/** Languages of the multilingual Whisper models (ISO 639-1 where one exists), in the models' token order. */
export const whisperLanguages = [
  'en', 'zh', 'de', 'es', 'ru', 'ko', 'fr', 'ja', 'pt', 'tr', 'pl', 'ca', 'nl', 'ar', 'sv', 'it', 'id', 'hi', 'fi', 'vi',
  'he', 'uk', 'el', 'ms', 'cs', 'ro', 'da', 'hu', 'ta', 'no', 'th', 'ur', 'hr', 'bg', 'lt', 'la', 'mi', 'ml', 'cy', 'sk',
  'te', 'fa', 'lv', 'bn', 'sr', 'az', 'sl', 'kn', 'et', 'mk', 'br', 'eu', 'is', 'hy', 'ne', 'mn', 'bs', 'kk', 'sq', 'sw',
  'gl', 'mr', 'pa', 'si', 'km', 'sn', 'yo', 'so', 'af', 'oc', 'ka', 'be', 'tg', 'sd', 'gu', 'am', 'yi', 'lo', 'uz', 'fo',
  'ht', 'ps', 'tk', 'nn', 'mt', 'sa', 'lb', 'my', 'bo', 'tl', 'mg', 'as', 'tt', 'haw', 'ln', 'ha', 'ba', 'jw', 'su',
] as const;

/** Normalises 'pt-BR' / 'PT' to 'pt'; keeps 'auto'. */
export function baseLanguage(tag: string): string {
  return tag.trim().toLowerCase().split(/[-_]/)[0] ?? '';
}

/** English names as OpenAI's verbose_json reports them. */
export const languageNames: Record<string, string> = {
  en: 'english', zh: 'chinese', de: 'german', es: 'spanish', ru: 'russian', ko: 'korean', fr: 'french', ja: 'japanese',
  pt: 'portuguese', tr: 'turkish', pl: 'polish', ca: 'catalan', nl: 'dutch', ar: 'arabic', sv: 'swedish', it: 'italian',
  id: 'indonesian', hi: 'hindi', fi: 'finnish', vi: 'vietnamese', he: 'hebrew', uk: 'ukrainian', el: 'greek', ms: 'malay',
  cs: 'czech', ro: 'romanian', da: 'danish', hu: 'hungarian', ta: 'tamil', no: 'norwegian', th: 'thai', ur: 'urdu',
  hr: 'croatian', bg: 'bulgarian', lt: 'lithuanian', la: 'latin', mi: 'maori', ml: 'malayalam', cy: 'welsh', sk: 'slovak',
  te: 'telugu', fa: 'persian', lv: 'latvian', bn: 'bengali', sr: 'serbian', az: 'azerbaijani', sl: 'slovenian',
  kn: 'kannada', et: 'estonian', mk: 'macedonian', br: 'breton', eu: 'basque', is: 'icelandic', hy: 'armenian',
  ne: 'nepali', mn: 'mongolian', bs: 'bosnian', kk: 'kazakh', sq: 'albanian', sw: 'swahili', gl: 'galician',
  mr: 'marathi', pa: 'punjabi', si: 'sinhala', km: 'khmer', sn: 'shona', yo: 'yoruba', so: 'somali', af: 'afrikaans',
  oc: 'occitan', ka: 'georgian', be: 'belarusian', tg: 'tajik', sd: 'sindhi', gu: 'gujarati', am: 'amharic',
  yi: 'yiddish', lo: 'lao', uz: 'uzbek', fo: 'faroese', ht: 'haitian creole', ps: 'pashto', tk: 'turkmen',
  nn: 'nynorsk', mt: 'maltese', sa: 'sanskrit', lb: 'luxembourgish', my: 'myanmar', bo: 'tibetan', tl: 'tagalog',
  mg: 'malagasy', as: 'assamese', tt: 'tatar', haw: 'hawaiian', ln: 'lingala', ha: 'hausa', ba: 'bashkir',
  jw: 'javanese', su: 'sundanese',
};

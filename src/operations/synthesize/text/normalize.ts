/**
 * Text normalisation before phonemisation: numbers, dates, times, money, percentages, ordinals and common abbreviations
 * are written out as words in the request's language (numbers via n2words), so neither espeak-ng's nor Kokoro's reading
 * depends on guessing. Languages without a table here keep their digits, which espeak-ng reads in that language itself.
 */
import * as enGB from 'n2words/en-GB';
import * as enUS from 'n2words/en-US';
import * as esES from 'n2words/es-ES';
import * as frFR from 'n2words/fr-FR';
import * as hiIN from 'n2words/hi-IN';
import * as itIT from 'n2words/it-IT';
import * as jaJP from 'n2words/ja-JP';
import * as ptPT from 'n2words/pt-PT';
import * as zhCN from 'n2words/zh-Hans-CN';

interface LanguageRules {
  cardinal: (value: bigint) => string;
  ordinal?: (value: bigint) => string;
  /** Ordinal suffixes after digits (1st, 2º, 3e). */
  ordinalPattern?: RegExp;
  decimalWord: string;
  /** Thousands separator and decimal mark in written numbers. */
  thousands: string;
  decimalMark: string;
  percent: string;
  months: string[];
  /** Builds a spoken date from words. */
  date: (day: string, month: string, year: string) => string;
  /** Builds a spoken time. */
  time: (hours: bigint, minutes: bigint, cardinal: (v: bigint) => string) => string;
  currencies: Record<string, [singular: string, plural: string, cents: string]>;
  abbreviations: Array<[RegExp, string]>;
  /** Languages written without spaces join number words directly. */
  joiner: string;
}

const en = (ordinal: (v: bigint) => string, cardinal: (v: bigint) => string, british: boolean): LanguageRules => ({
  cardinal,
  ordinal,
  ordinalPattern: /\b(\d+)(st|nd|rd|th)\b/gi,
  decimalWord: 'point',
  thousands: ',',
  decimalMark: '.',
  percent: 'percent',
  months: ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'],
  date: british ? (d, m, y) => `the ${d} of ${m} ${y}` : (d, m, y) => `${m} ${d}, ${y}`,
  time: (h, m, c) => (m === 0n ? `${c(h)} o'clock` : m < 10n ? `${c(h)} oh ${c(m)}` : `${c(h)} ${c(m)}`),
  currencies: { $: ['dollar', 'dollars', 'cents'], '€': ['euro', 'euros', 'cents'], '£': ['pound', 'pounds', 'pence'] },
  abbreviations: [
    [/\bMr\./g, 'Mister'],
    [/\bMrs\./g, 'Missus'],
    [/\bMs\./g, 'Miz'],
    [/\bDr\.(?=\s+[A-Z])/g, 'Doctor'],
    [/\bProf\./g, 'Professor'],
    [/\bSt\.(?=\s+[A-Z])/g, 'Saint'],
    [/\bJr\./g, 'Junior'],
    [/\bvs\./gi, 'versus'],
    [/\betc\./gi, 'et cetera'],
    [/\be\.g\./gi, 'for example'],
    [/\bi\.e\./gi, 'that is'],
    [/\bapprox\./gi, 'approximately'],
    [/\bNo\.(?=\s*\d)/g, 'number'],
    [/&/g, ' and '],
  ],
  joiner: ' ',
});

/** Years read as pairs in English (1990 -> nineteen ninety, 2005 -> two thousand five). */
function englishYear(year: bigint, cardinal: (v: bigint) => string): string {
  if (year >= 1100n && year < 2000n && year % 100n !== 0n)
    return `${cardinal(year / 100n)} ${year % 100n < 10n ? 'oh ' : ''}${cardinal(year % 100n)}`;
  if (year >= 2010n && year < 2100n) return `${cardinal(year / 100n)} ${cardinal(year % 100n)}`;
  return cardinal(year);
}

const rules: Record<string, LanguageRules> = {
  'en-us': en(
    (v) => enUS.toOrdinal(v),
    (v) => enUS.toCardinal(v),
    false,
  ),
  'en-gb': en(
    (v) => enGB.toOrdinal(v),
    (v) => enGB.toCardinal(v),
    true,
  ),
  es: {
    cardinal: (v) => esES.toCardinal(v),
    ordinal: (v) => esES.toOrdinal(v),
    ordinalPattern: /\b(\d+)(º|ª|°)/g,
    decimalWord: 'coma',
    thousands: '.',
    decimalMark: ',',
    percent: 'por ciento',
    months: ['enero', 'febrero', 'marzo', 'abril', 'mayo', 'junio', 'julio', 'agosto', 'septiembre', 'octubre', 'noviembre', 'diciembre'],
    date: (d, m, y) => `${d} de ${m} de ${y}`,
    time: (h, m, c) => (m === 0n ? `${c(h)} en punto` : `${c(h)} y ${c(m)}`),
    currencies: { $: ['dólar', 'dólares', 'centavos'], '€': ['euro', 'euros', 'céntimos'], '£': ['libra', 'libras', 'peniques'] },
    abbreviations: [
      [/\bSr\./g, 'señor'],
      [/\bSra\./g, 'señora'],
      [/\bSrta\./g, 'señorita'],
      [/\bDr\./g, 'doctor'],
      [/\bDra\./g, 'doctora'],
      [/\bUd\./g, 'usted'],
      [/\bUds\./g, 'ustedes'],
      [/\betc\./gi, 'etcétera'],
      [/\bp\.\s?ej\./gi, 'por ejemplo'],
      [/&/g, ' y '],
    ],
    joiner: ' ',
  },
  fr: {
    cardinal: (v) => frFR.toCardinal(v),
    ordinal: (v) => frFR.toOrdinal(v),
    ordinalPattern: /\b(\d+)(e|ème|er|re)\b/g,
    decimalWord: 'virgule',
    thousands: ' ',
    decimalMark: ',',
    percent: 'pour cent',
    months: ['janvier', 'février', 'mars', 'avril', 'mai', 'juin', 'juillet', 'août', 'septembre', 'octobre', 'novembre', 'décembre'],
    date: (d, m, y) => `${d} ${m} ${y}`,
    time: (h, m, c) => (m === 0n ? `${c(h)} heures` : `${c(h)} heures ${c(m)}`),
    currencies: { $: ['dollar', 'dollars', 'cents'], '€': ['euro', 'euros', 'centimes'], '£': ['livre', 'livres', 'pence'] },
    abbreviations: [
      [/\bM\.(?=\s+[A-Z])/g, 'Monsieur'],
      [/\bMme\b\.?/g, 'Madame'],
      [/\bMlle\b\.?/g, 'Mademoiselle'],
      [/\bDr\b\.?/g, 'Docteur'],
      [/\betc\./gi, 'et cetera'],
      [/&/g, ' et '],
    ],
    joiner: ' ',
  },
  it: {
    cardinal: (v) => itIT.toCardinal(v),
    ordinal: (v) => itIT.toOrdinal(v),
    ordinalPattern: /\b(\d+)(º|ª|°)/g,
    decimalWord: 'virgola',
    thousands: '.',
    decimalMark: ',',
    percent: 'per cento',
    months: [
      'gennaio',
      'febbraio',
      'marzo',
      'aprile',
      'maggio',
      'giugno',
      'luglio',
      'agosto',
      'settembre',
      'ottobre',
      'novembre',
      'dicembre',
    ],
    date: (d, m, y) => `${d} ${m} ${y}`,
    time: (h, m, c) => (m === 0n ? `le ${c(h)}` : `le ${c(h)} e ${c(m)}`),
    currencies: { $: ['dollaro', 'dollari', 'centesimi'], '€': ['euro', 'euro', 'centesimi'], '£': ['sterlina', 'sterline', 'penny'] },
    abbreviations: [
      [/\bSig\.ra\b/g, 'signora'],
      [/\bSig\./g, 'signor'],
      [/\bDott\./g, 'dottor'],
      [/\bDott\.ssa\b/g, 'dottoressa'],
      [/\bProf\./g, 'professor'],
      [/\becc\./gi, 'eccetera'],
      [/&/g, ' e '],
    ],
    joiner: ' ',
  },
  'pt-br': {
    cardinal: (v) =>
      ptPT
        .toCardinal(v)
        .replace(/dezasseis/g, 'dezesseis')
        .replace(/dezassete/g, 'dezessete')
        .replace(/dezanove/g, 'dezenove'),
    ordinal: (v) => ptPT.toOrdinal(v),
    ordinalPattern: /\b(\d+)(º|ª|°)/g,
    decimalWord: 'vírgula',
    thousands: '.',
    decimalMark: ',',
    percent: 'por cento',
    months: ['janeiro', 'fevereiro', 'março', 'abril', 'maio', 'junho', 'julho', 'agosto', 'setembro', 'outubro', 'novembro', 'dezembro'],
    date: (d, m, y) => `${d} de ${m} de ${y}`,
    time: (h, m, c) => (m === 0n ? `${c(h)} horas` : `${c(h)} e ${c(m)}`),
    currencies: { $: ['dólar', 'dólares', 'centavos'], '€': ['euro', 'euros', 'cêntimos'], R$: ['real', 'reais', 'centavos'] },
    abbreviations: [
      [/\bSr\./g, 'senhor'],
      [/\bSra\./g, 'senhora'],
      [/\bDr\./g, 'doutor'],
      [/\bDra\./g, 'doutora'],
      [/\betc\./gi, 'etcétera'],
      [/&/g, ' e '],
    ],
    joiner: ' ',
  },
  hi: {
    cardinal: (v) => hiIN.toCardinal(v),
    decimalWord: 'दशमलव',
    thousands: ',',
    decimalMark: '.',
    percent: 'प्रतिशत',
    months: ['जनवरी', 'फ़रवरी', 'मार्च', 'अप्रैल', 'मई', 'जून', 'जुलाई', 'अगस्त', 'सितंबर', 'अक्टूबर', 'नवंबर', 'दिसंबर'],
    date: (d, m, y) => `${d} ${m} ${y}`,
    time: (h, m, c) => (m === 0n ? `${c(h)} बजे` : `${c(h)} बजकर ${c(m)} मिनट`),
    currencies: { '₹': ['रुपया', 'रुपये', 'पैसे'], $: ['डॉलर', 'डॉलर', 'सेंट'] },
    abbreviations: [[/&/g, ' और ']],
    joiner: ' ',
  },
  ja: {
    cardinal: (v) => jaJP.toCardinal(v),
    decimalWord: '点',
    thousands: ',',
    decimalMark: '.',
    percent: 'パーセント',
    months: ['一月', '二月', '三月', '四月', '五月', '六月', '七月', '八月', '九月', '十月', '十一月', '十二月'],
    date: (d, m, y) => `${y}年${m}${d}日`,
    time: (h, m, c) => (m === 0n ? `${c(h)}時` : `${c(h)}時${c(m)}分`),
    currencies: { '¥': ['円', '円', '銭'], $: ['ドル', 'ドル', 'セント'], '€': ['ユーロ', 'ユーロ', 'セント'] },
    abbreviations: [],
    joiner: '',
  },
  zh: {
    cardinal: (v) => zhCN.toCardinal(v, { formal: false }).replace(/^一十/, '十'),
    decimalWord: '点',
    thousands: ',',
    decimalMark: '.',
    percent: '百分之',
    months: ['一月', '二月', '三月', '四月', '五月', '六月', '七月', '八月', '九月', '十月', '十一月', '十二月'],
    date: (d, m, y) => `${y}年${m}${d}日`,
    time: (h, m, c) => (m === 0n ? `${c(h)}点` : `${c(h)}点${c(m)}分`),
    currencies: { '¥': ['元', '元', '分'], $: ['美元', '美元', '美分'], '€': ['欧元', '欧元', '分'] },
    abbreviations: [],
    joiner: '',
  },
};

/**
 * The code normalizeText has rules for that serves a regional tag: the tag itself, else its bare language (`es-es` ->
 * `es`); one without rules is returned as it is (its digits are then read by espeak-ng).
 */
export function normalizationLanguage(tag: string): string {
  const bare = tag.split('-')[0]!;
  return rules[tag] || !rules[bare] ? tag : bare;
}

/** Writes out numbers, dates, times, money, percentages and abbreviations in `language` (a BCP-47-ish code, lower case). */
export function normalizeText(text: string, language: string): string {
  let out = text
    .normalize('NFC')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters (other than tab and newline) are what it removes
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ' ')
    .replace(/[‘’]/g, "'")
    .replace(/https?:\/\/\S+/g, ' ');
  const r = rules[language];
  if (!r) return out.replace(/\s+/g, ' ').trim();
  const c = r.cardinal;
  const words = (digits: string) => c(BigInt(digits));
  const t = escapeRegExp(r.thousands);
  const dm = escapeRegExp(r.decimalMark);

  for (const [pattern, replacement] of r.abbreviations) out = out.replace(pattern, replacement);
  // ISO dates 2024-03-15, then day/month/year (month/day/year in American English).
  out = out.replace(/\b(\d{4})-(\d{2})-(\d{2})\b/g, (all, y: string, m: string, d: string) => spokenDate(r, language, d, m, y) ?? all);
  out = out.replace(
    /\b(\d{1,2})[/.](\d{1,2})[/.](\d{4})\b/g,
    (all, a: string, b: string, y: string) =>
      (language === 'en-us' ? spokenDate(r, language, b, a, y) : spokenDate(r, language, a, b, y)) ?? all,
  );
  out = out.replace(/\b([01]?\d|2[0-3]):([0-5]\d)\b/g, (_all, h: string, m: string) => r.time(BigInt(h), BigInt(m), c));
  // Money: symbol before or after the amount.
  const symbols = Object.keys(r.currencies).map(escapeRegExp).join('|');
  if (symbols) {
    const amount = `\\d{1,3}(?:${t}\\d{3})+(?:${dm}\\d{1,2})?|\\d+(?:${dm}\\d{1,2})?`;
    const money = (symbol: string, value: string) => spokenMoney(r, symbol, value);
    out = out.replace(new RegExp(`(${symbols})\\s?(${amount})`, 'g'), (_all, s: string, v: string) => money(s, v));
    out = out.replace(new RegExp(`(${amount})\\s?(${symbols})`, 'g'), (_all, v: string, s: string) => money(s, v));
  }
  out = out.replace(new RegExp(`(\\d+(?:${dm}\\d+)?)\\s?%`, 'g'), (_all, v: string) =>
    language === 'zh' ? `${r.percent}${spokenNumber(r, v)}` : `${spokenNumber(r, v)}${r.joiner}${r.percent}`,
  );
  if (r.ordinal && r.ordinalPattern) out = out.replace(r.ordinalPattern, (_all, v: string) => r.ordinal!(BigInt(v)));
  if (language.startsWith('en')) {
    out = out.replace(/\b(1[1-9]\d\d|20\d\d)(s?)\b(?![.,]\d)/g, (_all, y: string, s: string) => {
      const spoken = englishYear(BigInt(y), c);
      return s ? `${spoken.replace(/y$/, 'ie')}s` : spoken;
    });
  }
  // Grouped and plain numbers, with decimals read digit by digit.
  out = out.replace(new RegExp(`\\d{1,3}(?:${t}\\d{3})+(?:${dm}\\d+)?|\\d+(?:${dm}\\d+)?`, 'g'), (v) => spokenNumber(r, v));
  out = out.replace(/(\d)/g, (d) => words(d));
  return out.replace(/\s+/g, ' ').trim();
}

function spokenNumber(r: LanguageRules, written: string): string {
  const [whole, fraction] = written.split(r.decimalMark);
  const integer = r.cardinal(BigInt(whole!.split(r.thousands).join('')));
  if (!fraction) return integer;
  const digits = [...fraction].map((d) => r.cardinal(BigInt(d))).join(r.joiner);
  return `${integer}${r.joiner}${r.decimalWord}${r.joiner}${digits}`;
}

function spokenMoney(r: LanguageRules, symbol: string, written: string): string {
  const [singular, plural, cents] = r.currencies[symbol]!;
  const [whole, fraction] = written.split(r.decimalMark);
  const units = BigInt(whole!.split(r.thousands).join(''));
  const head = `${r.cardinal(units)}${r.joiner}${units === 1n ? singular : plural}`;
  const hundredths = fraction ? BigInt(fraction.padEnd(2, '0')) : 0n;
  if (hundredths === 0n) return head;
  const and = r.joiner === '' ? '' : r === rules['en-us'] || r === rules['en-gb'] ? ' and ' : ' ';
  return `${head}${and}${r.cardinal(hundredths)}${r.joiner}${cents}`;
}

function spokenDate(r: LanguageRules, language: string, day: string, month: string, year: string): string | undefined {
  const m = Number(month);
  const d = BigInt(day);
  if (m < 1 || m > 12 || d < 1n || d > 31n) return undefined;
  const y = BigInt(year);
  const yearWords = language.startsWith('en')
    ? englishYear(y, r.cardinal)
    : language === 'zh'
      ? [...year].map((digit) => r.cardinal(BigInt(digit)).replace('零', '〇')).join('')
      : r.cardinal(y);
  const dayWords =
    language.startsWith('en') && r.ordinal ? r.ordinal(d) : language === 'fr' && d === 1n && r.ordinal ? r.ordinal(d) : r.cardinal(d);
  return r.date(dayWords, r.months[m - 1]!, yearWords);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * What is spoken, as typed segments the service renders one after another: text (with its language, voice and prosody),
 * phonemes, breaks and marks. Plain text is one text segment; SSML (a `<speak>` document) is parsed into segments, and
 * pronunciation rules (SSML-free lexicons) split text segments where they match. One path for every input.
 */
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { VoxError } from '../../../core/errors.js';
import type { PronunciationRule } from '../../../lexicons/contract.js';
import { xsampaToIpa } from './phonemes.js';

/** How a stretch is said: a speaking-rate multiplier, a gain and a pitch shift (absent: none). */
export interface SegmentProsody {
  rate: number;
  volumeDb: number;
  pitchSemitones?: number;
}

/** Who says a stretch, where SSML changed it: a language (`<lang>`) or a voice (`<voice>`); absent: the request's. */
export interface SegmentSpeaker {
  language?: string;
  voiceId?: string;
}

export type SpeechSegment =
  | ({ kind: 'text'; text: string } & SegmentSpeaker & SegmentProsody)
  /** `text` is what the phonemes stand for (the written word, for word timestamps). */
  | ({ kind: 'phoneme'; text: string; ipa: string } & SegmentSpeaker & SegmentProsody)
  | { kind: 'break'; seconds: number }
  | { kind: 'mark'; name: string };

export interface ParsedSpeech {
  segments: SpeechSegment[];
  /** What was asked for but is not honoured (said in the x-voxd-warnings header and the JSON answers). */
  warnings: string[];
}

/** The longest break honoured (as Azure's and Google's SSML). */
export const maxBreakSeconds = 10;
const breakStrengths: Record<string, number> = { none: 0, 'x-weak': 0.1, weak: 0.25, medium: 0.5, strong: 0.8, 'x-strong': 1.2 };
const rateWords: Record<string, number> = { 'x-slow': 0.5, slow: 0.75, medium: 1, fast: 1.25, 'x-fast': 1.6, default: 1 };
/** Pitch words as shifts from the voice's own pitch (a voice's range is about an octave, so x-high stays natural). */
const pitchWords: Record<string, number> = { 'x-low': -4, low: -2, medium: 0, high: 2, 'x-high': 4, default: 0 };
/** The largest pitch shift honoured, either way (an octave). */
export const maxPitchSemitones = 12;
const volumeWords: Record<string, number> = { silent: -Infinity, 'x-soft': -12, soft: -6, medium: 0, loud: 4, 'x-loud': 8, default: 0 };
/** Emphasis as delivery: slower and louder (strong, moderate) or faster and quieter (reduced). */
const emphasisLevels: Record<string, SegmentProsody> = {
  strong: { rate: 0.85, volumeDb: 4 },
  moderate: { rate: 0.92, volumeDb: 2 },
  none: { rate: 1, volumeDb: 0 },
  reduced: { rate: 1.08, volumeDb: -3 },
};
export const sayAsKinds = ['characters', 'spell-out', 'cardinal', 'ordinal', 'digits', 'date', 'time', 'telephone'] as const;
const elements = ['speak', 'break', 'p', 's', 'sub', 'phoneme', 'say-as', 'prosody', 'emphasis', 'lang', 'voice', 'mark'] as const;

/** Where a `<speak>` document starts (with its XML declaration, if any). */
export const ssmlDocumentStart = /(<\?xml[^>]*\?>\s*)?<speak[\s>/]/u;

/** A text is SSML when it is a `<speak>` document (or the caller says so). */
export const isSsml = (text: string): boolean => {
  const start = text.search(ssmlDocumentStart);
  return start >= 0 && text.slice(0, start).trim() === '';
};

/** An opening or closing tag of a supported element (`<s>` and `<p>` but not `<strong>` or `<pre>`). */
const ssmlTag = new RegExp(`</?(${elements.join('|')})(?=[\\s/>])[^<>]*>?`, 'u');

/**
 * The first tag of a supported SSML element in `text`, with its offset: markup in text that is not a document (on the speech
 * socket, where it would otherwise be read aloud).
 */
export function ssmlMarkupIn(text: string): { tag: string; offset: number } | undefined {
  const match = ssmlTag.exec(text);
  return match ? { tag: match[0], offset: match.index } : undefined;
}

/** Plain text: one segment. */
export const plainSpeech = (text: string): ParsedSpeech => ({
  segments: [{ kind: 'text', text, rate: 1, volumeDb: 0 }],
  warnings: [],
});

/** The characters to speak (text and substitutions, not markup): what length limits count. */
export const spokenText = (segments: readonly SpeechSegment[]): string =>
  segments
    .flatMap((s) => (s.kind === 'text' || s.kind === 'phoneme' ? [s.text] : []))
    .join(' ')
    .replace(/\s+/gu, ' ')
    .trim();

interface Frame extends SegmentSpeaker, SegmentProsody {
  name: string;
  /** Inside <sub> or <phoneme>: the text inside is what is written, not what is said. */
  replaced?: boolean;
  sayAs?: { kind: (typeof sayAsKinds)[number]; format?: string; text: string };
}

/** Parses a `<speak>` document; anything outside the supported SSML is a 400 naming the element and its line:column. */
export function parseSsml(ssml: string): ParsedSpeech {
  const parser = new SaxesParser<{ xmlns: false; position: true }>({ xmlns: false, position: true });
  const segments: SpeechSegment[] = [];
  const warnings: string[] = [];
  const stack: Frame[] = [];
  const where = (): string => `line ${parser.line}, column ${parser.column}`;
  const fail = (message: string): never => {
    throw new VoxError('invalid_request', `SSML: ${message} (${where()}).`, { param: 'text' });
  };
  const top = (): Frame => stack.at(-1) ?? { name: '', rate: 1, volumeDb: 0 };
  const speaker = (frame: Frame): SegmentSpeaker & SegmentProsody => ({
    ...(frame.language ? { language: frame.language } : {}),
    ...(frame.voiceId ? { voiceId: frame.voiceId } : {}),
    rate: frame.rate,
    volumeDb: frame.volumeDb,
    ...(frame.pitchSemitones ? { pitchSemitones: frame.pitchSemitones } : {}),
  });
  const addText = (text: string, frame: Frame): void => {
    const last = segments.at(-1);
    const said = speaker(frame);
    if (last?.kind === 'text' && sameSpeaker(last, said)) last.text += text;
    else segments.push({ kind: 'text', text, ...said });
  };
  const attribute = (tag: SaxesTagPlain, name: string, required = false): string | undefined => {
    const value = tag.attributes[name];
    if (value === undefined && required) fail(`<${tag.name}> needs the attribute '${name}'`);
    return value;
  };

  parser.on('opentag', (tag) => {
    const parent = top();
    const name = tag.name;
    if (!(elements as readonly string[]).includes(name)) fail(`unknown element <${name}>`);
    if (stack.length === 0 && name !== 'speak') fail(`the root element must be <speak>, not <${name}>`);
    if (stack.length > 0 && name === 'speak') fail('<speak> inside <speak>');
    if (parent.replaced || parent.sayAs) fail(`<${name}> inside <${parent.name}> (only text may be there)`);
    const frame: Frame = { ...parent, name };
    delete frame.replaced;
    delete frame.sayAs;
    switch (name) {
      case 'speak': {
        const language = tag.attributes['xml:lang'];
        if (language) frame.language = language;
        break;
      }
      case 'break': {
        const time = attribute(tag, 'time');
        const strength = attribute(tag, 'strength');
        let seconds = 0.5;
        if (time !== undefined) seconds = parseTime(time) ?? fail(`<break> time '${time}' is not a time such as 1.5s or 500ms`);
        else if (strength !== undefined)
          seconds =
            breakStrengths[strength] ?? fail(`<break> strength '${strength}' is not one of ${Object.keys(breakStrengths).join(', ')}`);
        if (seconds > maxBreakSeconds) fail(`<break> of ${seconds} s is longer than ${maxBreakSeconds} s`);
        segments.push({ kind: 'break', seconds });
        break;
      }
      case 'sub':
        addText(` ${attribute(tag, 'alias', true)} `, frame);
        frame.replaced = true;
        break;
      case 'phoneme': {
        const alphabet = attribute(tag, 'alphabet') ?? 'ipa';
        const ph = attribute(tag, 'ph', true)!;
        if (alphabet !== 'ipa' && alphabet !== 'x-sampa') fail(`<phoneme> alphabet '${alphabet}' is not ipa or x-sampa`);
        const ipa = alphabet === 'x-sampa' ? xsampaToIpa(ph) : ph;
        segments.push({ kind: 'phoneme', text: '', ipa, ...speaker(frame) });
        frame.replaced = true;
        break;
      }
      case 'say-as': {
        const kind = attribute(tag, 'interpret-as', true)!;
        if (!(sayAsKinds as readonly string[]).includes(kind))
          fail(`<say-as> interpret-as '${kind}' is not one of ${sayAsKinds.join(', ')}`);
        const format = attribute(tag, 'format');
        frame.sayAs = { kind: kind as (typeof sayAsKinds)[number], text: '', ...(format ? { format } : {}) };
        break;
      }
      case 'prosody': {
        const rate = attribute(tag, 'rate');
        const volume = attribute(tag, 'volume');
        const pitch = attribute(tag, 'pitch');
        if (rate !== undefined)
          frame.rate *=
            rateWords[rate] ?? parseRelative(rate, 'rate') ?? fail(`<prosody> rate '${rate}' is not x-slow..x-fast or a percentage`);
        if (volume !== undefined)
          frame.volumeDb +=
            volumeWords[volume] ?? parseDecibels(volume) ?? fail(`<prosody> volume '${volume}' is not silent..x-loud or ±N dB`);
        if (pitch !== undefined && /hz\s*$/iu.test(pitch))
          warnings.push(`SSML <prosody pitch="${pitch}"> is not honoured (${where()}): give it in st, % or a word, not Hz.`);
        else if (pitch !== undefined) {
          const shift = pitchWords[pitch] ?? parseSemitones(pitch) ?? fail(`<prosody> pitch '${pitch}' is not x-low..x-high, ±N st or ±N%`);
          const total = (frame.pitchSemitones ?? 0) + shift;
          frame.pitchSemitones = Math.round(Math.min(maxPitchSemitones, Math.max(-maxPitchSemitones, total)) * 100) / 100;
        }
        break;
      }
      case 'emphasis': {
        const level = attribute(tag, 'level') ?? 'moderate';
        const emphasis =
          emphasisLevels[level] ?? fail(`<emphasis> level '${level}' is not one of ${Object.keys(emphasisLevels).join(', ')}`);
        frame.rate *= emphasis.rate;
        frame.volumeDb += emphasis.volumeDb;
        break;
      }
      case 'lang':
        frame.language = attribute(tag, 'xml:lang', true)!;
        break;
      case 'voice':
        frame.voiceId = attribute(tag, 'name', true)!;
        break;
      case 'mark':
        segments.push({ kind: 'mark', name: attribute(tag, 'name', true)! });
        break;
    }
    stack.push(frame);
  });

  parser.on('text', (text) => {
    const frame = top();
    if (stack.length === 0) {
      if (/\S/u.test(text)) fail('text outside <speak>');
      return;
    }
    if (frame.sayAs) frame.sayAs.text += text;
    else if (frame.name === 'phoneme') {
      const last = segments.at(-1);
      if (last?.kind === 'phoneme') last.text += text;
    } else if (!frame.replaced) addText(text, frame);
  });

  let lastClosed: string | undefined;
  parser.on('closetag', (tag) => {
    lastClosed = tag.name;
    const frame = stack.pop()!;
    if (frame.sayAs) addText(` ${sayAs(frame.sayAs.kind, frame.sayAs.text.trim(), frame.sayAs.format, where, warnings)} `, top());
    else if (tag.name === 'phoneme') {
      const last = segments.at(-1);
      if (last?.kind === 'phoneme') last.text = last.text.trim();
    } else if (tag.name === 'p' || tag.name === 's') addText('\n\n', top());
  });

  try {
    parser.write(ssml).close();
  } catch (error) {
    if (error instanceof VoxError) throw error;
    // saxes' messages start with the position (`1:12: unexpected close tag.`).
    // saxes closes the open elements up to the one named before it reports a mismatch: the last closed is the culprit.
    const inside = lastClosed && /close tag/u.test((error as Error).message) ? ` (<${lastClosed}> is not closed)` : '';
    throw new VoxError('invalid_request', `SSML is not well-formed XML: ${(error as Error).message}${inside}`, { param: 'text' });
  }
  // Substitutions and say-as are padded with spaces; none goes before punctuation (espeak-ng reads a lone "." as "dot").
  for (const segment of segments) if (segment.kind === 'text') segment.text = segment.text.replace(/[ \t]+(?=[.,;:!?…])/gu, '');
  return { segments: segments.filter((s) => s.kind !== 'text' || /[\p{L}\p{N}]/u.test(s.text)), warnings };
}

const sameSpeaker = (a: SegmentSpeaker & SegmentProsody, b: SegmentSpeaker & SegmentProsody): boolean =>
  a.language === b.language && a.voiceId === b.voiceId && sameProsody(a, b);

/** Whether two stretches are said alike (rate, volume and pitch). */
export const sameProsody = (a: SegmentProsody, b: SegmentProsody): boolean =>
  a.rate === b.rate && a.volumeDb === b.volumeDb && (a.pitchSemitones ?? 0) === (b.pitchSemitones ?? 0);

/** `1.5s`, `500ms` -> seconds. */
function parseTime(value: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(s|ms)\s*$/u.exec(value);
  if (!match) return undefined;
  return Number(match[1]) / (match[2] === 'ms' ? 1000 : 1);
}

/** `80%`, `+20%`, `-10%`, `1.2` -> a multiplier. */
function parseRelative(value: string, _what: string): number | undefined {
  const percent = /^\s*([+-]?)(\d+(?:\.\d+)?)%\s*$/u.exec(value);
  if (percent) {
    const n = Number(percent[2]);
    const factor = percent[1] === '' ? n / 100 : 1 + (percent[1] === '-' ? -n : n) / 100;
    return factor > 0 ? Math.min(4, Math.max(0.25, factor)) : undefined;
  }
  const number = /^\s*(\d+(?:\.\d+)?)\s*$/u.exec(value);
  return number && Number(number[1]) > 0 ? Math.min(4, Math.max(0.25, Number(number[1]))) : undefined;
}

/** `+2st`, `-1.5st`, `+10%` (of the pitch) -> semitones. */
function parseSemitones(value: string): number | undefined {
  const match = /^\s*([+-])(\d+(?:\.\d+)?)\s*(st|%)\s*$/u.exec(value);
  if (!match) return undefined;
  const n = (match[1] === '-' ? -1 : 1) * Number(match[2]);
  if (match[3] === 'st') return n;
  return n > -100 ? 12 * Math.log2(1 + n / 100) : undefined;
}

function parseDecibels(value: string): number | undefined {
  const match = /^\s*([+-]?\d+(?:\.\d+)?)\s*dB\s*$/u.exec(value);
  return match ? Math.min(12, Number(match[1])) : undefined;
}

const ordinalSuffix = (n: number): string => {
  const lastTwo = n % 100;
  if (lastTwo >= 11 && lastTwo <= 13) return 'th';
  return ['th', 'st', 'nd', 'rd'][n % 10] ?? 'th';
};
const months = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** `<say-as>` as the words the text normaliser reads as meant. */
function sayAs(
  kind: (typeof sayAsKinds)[number],
  text: string,
  format: string | undefined,
  where: () => string,
  warnings: string[],
): string {
  const spaced = (s: string): string => [...s.replace(/\s+/gu, '')].join(' ');
  switch (kind) {
    case 'characters':
    case 'spell-out':
      return spaced(text);
    case 'digits':
      return spaced(text.replace(/\D+/gu, ''));
    case 'telephone':
      // Groups (as written) read digit by digit, a pause between them.
      return text
        .split(/[^\d+]+/u)
        .filter(Boolean)
        .map((group) => spaced(group.replace(/^\+/u, 'plus ')))
        .join(', ');
    case 'cardinal':
      return text.replace(/[,\s](?=\d{3}\b)/gu, '');
    case 'ordinal': {
      const n = Number(text.replace(/\D+/gu, ''));
      return Number.isFinite(n) && /\d/u.test(text) ? `${n}${ordinalSuffix(n)}` : text;
    }
    case 'date': {
      const parts = text.split(/[-/.\s]+/u).map(Number);
      const order = (format ?? 'ymd').toLowerCase();
      if (parts.length === order.length && parts.every(Number.isFinite)) {
        const value = (letter: string): number | undefined => parts[order.indexOf(letter)];
        const [year, month, day] = [value('y'), value('m'), value('d')];
        const monthName = month !== undefined ? months[month - 1] : undefined;
        if (monthName || month === undefined)
          return [monthName, day !== undefined ? `${day}${ordinalSuffix(day)}` : undefined, year].filter((p) => p !== undefined).join(' ');
      }
      warnings.push(
        `SSML <say-as interpret-as="date"> could not read '${text}' as format '${format ?? 'ymd'}' (${where()}): read as written.`,
      );
      return text;
    }
    case 'time':
      return text;
  }
}

/** Splits text segments where a pronunciation rule of their language matches a whole word (rules applied in order). */
export function applyPronunciationRules(
  segments: readonly SpeechSegment[],
  rules: readonly PronunciationRule[],
  requestLanguage: string,
): SpeechSegment[] {
  if (rules.length === 0) return [...segments];
  const primary = (tag: string): string => tag.toLowerCase().split(/[-_]/u)[0]!;
  let out = [...segments];
  for (const rule of rules) {
    const pattern = new RegExp(`(?<![\\p{L}\\p{N}\\p{M}])(?:${rule.graphemes.map(escapeRegExp).join('|')})(?![\\p{L}\\p{N}\\p{M}])`, 'gu');
    out = out.flatMap((segment): SpeechSegment[] => {
      if (segment.kind !== 'text' || primary(segment.language ?? requestLanguage) !== primary(rule.language)) return [segment];
      if (rule.kind === 'alias') return [{ ...segment, text: segment.text.replace(pattern, rule.alias) }];
      const { text, ...said } = segment;
      const pieces: SpeechSegment[] = [];
      let last = 0;
      for (const match of text.matchAll(pattern)) {
        pieces.push({ ...said, kind: 'text', text: text.slice(last, match.index) });
        const ipa = rule.alphabet === 'x-sampa' ? xsampaToIpa(rule.phonemes) : rule.phonemes;
        pieces.push({ ...said, kind: 'phoneme', text: match[0], ipa });
        last = match.index + match[0].length;
      }
      pieces.push({ ...said, kind: 'text', text: text.slice(last) });
      return pieces.filter((p) => p.kind !== 'text' || /[\p{L}\p{N}]/u.test(p.text));
    });
  }
  return out;
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');

/**
 * Whisper writes Mandarin in either script, often traditional characters whatever the speaker's region (a prompt in the
 * wanted script selects it too, but changed the recognised words: zh CER 24.7% -> 27-33% on ../shared/eval/asr).
 * Chinese transcripts are converted character by character (OpenCC) to the script the request's tag asks for:
 * zh-TW / zh-Hant Taiwan traditional, zh-HK / zh-MO Hong Kong traditional, any other zh tag and zh detected under
 * `auto` simplified.
 */
import { Converter } from 'opencc-js';

type Script = 'cn' | 'tw' | 'hk';
const converters = new Map<Script, (text: string) => string>();

export function chineseScript(tag: string): Script {
  if (/[-_](hk|mo)\b/i.test(tag)) return 'hk';
  return /[-_](hant|tw)\b/i.test(tag) ? 'tw' : 'cn';
}

/** The text converter for a transcript's language and the request's tag; undefined for languages written one way. */
export function scriptConverter(language: string, tag: string): ((text: string) => string) | undefined {
  if (language !== 'zh') return undefined;
  const script = chineseScript(tag);
  const cached = converters.get(script);
  if (cached) return cached;
  // Whichever script Whisper used, the text is first brought to one standard form, then to the wanted one.
  const toSimplified = Converter({ from: 't', to: 'cn' });
  const toScript = script === 'cn' ? undefined : Converter({ from: 'cn', to: script });
  const converter = toScript ? (text: string) => toScript(toSimplified(text)) : toSimplified;
  converters.set(script, converter);
  return converter;
}

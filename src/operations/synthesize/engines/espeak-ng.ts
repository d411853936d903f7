/**
 * espeak-ng (GPL-3.0) is only ever run as a separate program, never linked: it phonemises text for Kokoro (IPA) and is
 * the synthesis engine for every language Kokoro lacks.
 */
import { runProcess } from '../../../audio/ffmpeg.js';
import { VoxError } from '../../../core/errors.js';

export interface EspeakVoiceInfo {
  /** espeak-ng language code (`de`, `en-gb-scotland`, `cmn`). */
  language: string;
  name: string;
  gender: 'female' | 'male' | 'unknown';
}

let voiceList: Promise<EspeakVoiceInfo[]> | undefined;

/** The installed espeak-ng voices (one per language code; MBROLA voices are not used). */
export function espeakVoices(): Promise<EspeakVoiceInfo[]> {
  voiceList ??= runEspeak(['--voices']).then((output) => {
    const seen = new Set<string>();
    const voices: EspeakVoiceInfo[] = [];
    for (const line of output.toString('utf8').split('\n').slice(1)) {
      const match = /^\s*\d+\s+(\S+)\s+\S*\/([MF-])\s+(\S+)\s+(\S+)/.exec(line);
      if (!match || match[4]!.startsWith('mb/') || seen.has(match[1]!)) continue;
      seen.add(match[1]!);
      voices.push({
        language: match[1]!,
        name: match[3]!.replace(/_/g, ' '),
        gender: match[2] === 'F' ? 'female' : match[2] === 'M' ? 'male' : 'unknown',
      });
    }
    return voices;
  });
  return voiceList;
}

/**
 * IPA for each piece of text (pieces must not contain punctuation that ends clauses). Pieces go to one espeak-ng
 * process separated by blank lines, which espeak-ng answers paragraph by paragraph; multi-letter phonemes are joined
 * with `^` so callers can map diphthongs and affricates.
 */
export async function phonemize(pieces: string[], voice: string, signal?: AbortSignal): Promise<string[]> {
  if (pieces.length === 0) return [];
  const input = `${pieces.map((p) => p.replace(/\s+/g, ' ').trim()).join('\n\n')}\n`;
  const output = (await runEspeak(['-q', '--ipa', '--tie=^', '-b', '1', '-v', voice], Buffer.from(input, 'utf8'), signal)).toString('utf8');
  const paragraphs = output
    .split(/\n\s*\n/)
    .map((p) =>
      p
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean)
        .join(' '),
    )
    .filter((p) => p.length > 0);
  if (paragraphs.length !== pieces.length) {
    // espeak-ng merged or split pieces: fall back to one process per piece (rare: pieces without letters).
    return Promise.all(pieces.map(async (piece) => (await phonemize1(piece, voice, signal)).trim()));
  }
  return paragraphs.map(stripLanguageSwitches);
}

async function phonemize1(piece: string, voice: string, signal?: AbortSignal): Promise<string> {
  const output = await runEspeak(['-q', '--ipa', '--tie=^', '-b', '1', '-v', voice], Buffer.from(`${piece}\n`, 'utf8'), signal);
  return stripLanguageSwitches(
    output
      .toString('utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .join(' '),
  );
}

/** espeak-ng marks words it reads with another language's rules as `(en)...(de)`. */
function stripLanguageSwitches(ipa: string): string {
  return ipa.replace(/\([a-z-]+\)/g, '');
}

/** Speech as 16-bit WAV bytes from SSML input. */
export async function speakSsml(ssml: string, voice: string, wordsPerMinute: number, signal?: AbortSignal): Promise<Buffer> {
  const rate = String(Math.min(Math.max(wordsPerMinute, 80), 450));
  return runEspeak(['-m', '-b', '1', '-v', voice, '-s', rate, '--stdout'], Buffer.from(ssml, 'utf8'), signal);
}

async function runEspeak(args: string[], input?: Buffer, signal?: AbortSignal): Promise<Buffer> {
  const result = await runProcess('espeak-ng', args, { input, signal });
  if (result.exitCode !== 0) throw new VoxError('internal', 'espeak-ng failed.', { cause: result.stderr });
  return result.stdout;
}

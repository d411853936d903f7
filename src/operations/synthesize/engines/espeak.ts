/**
 * espeak-ng as a synthesis engine for every language it has (about 130 voices in Debian bookworm), 24 kHz output.
 * Emotions use the speaking rate (words per minute), SSML prosody (pitch, range) and the `whisper` voice variant, then the shared gain and
 * tilt.
 * Post-filter (makes the formant synthesiser less harsh): DC/rumble high-pass, a treble cut that softens its buzzy
 * upper harmonics, a light low-pass, then SoX resampling to 24 kHz.
 */
import { filterAndResample, parsePcm16Wav } from '../../../audio/filter.js';
import { applyGainDb, applySpectralTilt, guardPeak } from '../../../audio/shaping.js';
import { trimEdgeSilence } from '../../../audio/silence.js';
import { VoxError } from '../../../core/errors.js';
import { prosody as emotionProsody } from '../emotion.js';
import type { BuiltinVoice, SynthesisRequest, SynthesizedChunk, Synthesizer } from '../synthesizer.js';
import { normalizeText } from '../text/normalize.js';
import { ipaToEspeak } from '../text/phonemes.js';
import { joinPieces, splitSentences } from '../text/sentences.js';
import { mapWordTimes, spokenWords, type TimedWord } from '../text/word-times.js';
import { espeakVoices, speakSsml, type EspeakVoiceInfo } from './espeak-ng.js';
import { unitSpans } from './espeak-words.js';

export const espeakSampleRate = 24000;
const espeakDefaultWordsPerMinute = 175;
/**
 * Silence kept after each sentence. espeak-ng's own pause grows with the intonation range (0.37 s neutral, 0.6 s at a
 * 132% range after an exclamation), which made wider-range emotions slower overall though their speech is faster.
 */
const sentencePauseSeconds = 0.35;
const postFilters = ['highpass=f=70', 'treble=g=-5:f=3500:t=s:w=0.7', 'lowpass=f=9000:p=2'];
/** Voice ids are `espeak-<language>`, optionally with an espeak-ng variant: `espeak-de+f3`. */
const voicePattern = /^espeak-([a-z0-9-]+?)(?:\+([A-Za-z0-9_]+))?$/;

export class EspeakSynthesizer implements Synthesizer {
  readonly engine = 'espeak';
  readonly modelId = 'espeak-ng';
  readonly sampleRate = espeakSampleRate;
  readonly description = 'espeak-ng formant voice';
  readonly neural = false;
  readonly blends = false;
  readonly shiftsPitch = true;

  private constructor(private readonly installed: EspeakVoiceInfo[]) {}

  static async load(): Promise<EspeakSynthesizer> {
    return new EspeakSynthesizer(await espeakVoices());
  }

  /** Installed language codes, plus bare codes that only exist regionally here (`fr` -> `fr-fr`). */
  languages(): string[] {
    const codes = this.installed.map((v) => v.language);
    const bare = codes.map((c) => c.split('-')[0]!).filter((c) => !codes.includes(c));
    return [...codes, ...new Set(bare)];
  }

  /** The espeak-ng language code for a requested code (exact, else its home form `fr-fr`, else its first regional form). */
  resolve(language: string): string | undefined {
    const codes = this.installed.map((v) => v.language);
    return [language, `${language}-${language}`].find((c) => codes.includes(c)) ?? codes.find((c) => c.startsWith(`${language}-`));
  }

  speaks(language: string): string | undefined {
    return this.resolve(language) ? language : undefined;
  }

  /** A language is spoken by its own voice: the voice's language decides the accent. */
  voiceFor(language: string): string {
    return `espeak-${this.resolve(language)}`;
  }

  voices(): BuiltinVoice[] {
    return this.installed.map((v) => ({
      id: `espeak-${v.language}`,
      name: `${v.name} (espeak-ng)`,
      engine: 'espeak',
      languages: [v.language],
      gender: v.gender,
    }));
  }

  async *synthesize(request: SynthesisRequest): AsyncIterable<SynthesizedChunk> {
    const { language, signal } = request;
    const espeakLanguage = this.resolve(language);
    if (!espeakLanguage) throw new VoxError('unsupported_value', `espeak-ng does not speak '${language}'.`, { param: 'language' });
    if (!('id' in request.voice))
      throw new VoxError('unsupported_value', 'espeak-ng voices cannot be blended or given a style vector.', { param: 'voice' });
    const match = voicePattern.exec(request.voice.id);
    if (!match || !this.resolve(match[1]!))
      throw new VoxError('not_found', `Unknown espeak-ng voice '${request.voice.id}'.`, { param: 'voice' });
    const emotion = emotionProsody[request.emotion ?? 'neutral'];
    // The voice's language decides the accent; the request's language must be one espeak-ng speaks (checked above).
    const variant = emotion.voiced ? match[2] : match[2]?.startsWith('f') ? 'whisperf' : 'whisper';
    const voice = `${match[1]}${variant ? `+${variant}` : ''}`;
    const wordsPerMinute = Math.round(espeakDefaultWordsPerMinute * (request.speed ?? 1) * emotion.rate);
    const pitchFactor = 2 ** ((emotion.f0Semitones + (request.pitchSemitones ?? 0)) / 12);
    const pitch = Math.round(100 * (pitchFactor - 1));
    // espeak-ng's range is in absolute pitch units (so it is scaled with the pitch), responds weakly at faster rates
    // (so the deviation from 1 is doubled, calibrated with ../../../audio/pitch.ts) and saturates at 200%.
    const range = Math.round(Math.min(200, 100 * pitchFactor * (1 + 2 * (emotion.f0Range - 1))));
    // Phonemes given by the caller go in as espeak-ng's `[[...]]` phoneme input, within the text around them.
    const { parts } = request;
    const sentences = parts ? [request.text] : splitSentences(normalizeText(request.text, language));
    const speak = async (body: string) =>
      parsePcm16Wav(
        await speakSsml(
          `<speak><prosody pitch="${pitch >= 0 ? '+' : ''}${pitch}%" range="${range}%">${body}</prosody></speak>`,
          voice,
          wordsPerMinute,
          signal,
        ),
      );
    for (const sentence of sentences) {
      signal?.throwIfAborted();
      const said = parts
        ? // The trailing space keeps a closing tag after `]]` from being read as words (see ipaToEspeak).
          `${joinPieces(parts.map((p) => (p.ipa === undefined ? escapeXml(normalizeText(p.text, language)) : ipaToEspeak(p.ipa))))} `
        : escapeXml(sentence);
      // What is timed: each spoken word, and a run of given phonemes as one unit standing for the words it replaces.
      const units = parts
        ? parts.flatMap((p) =>
            p.ipa === undefined
              ? spokenWords(normalizeText(p.text, language)).map((word) => ({ said: escapeXml(word), words: [word] }))
              : [{ said: `${ipaToEspeak(p.ipa)} `, words: spokenWords(p.text) }],
          )
        : spokenWords(sentence).map((word) => ({ said: escapeXml(word), words: [word] }));
      const raw = await speak(said);
      const spans = request.wordTimes
        ? await unitSpans(
            raw,
            units.map((unit) => unit.said),
            speak,
          )
        : undefined;
      const filtered = (await filterAndResample(raw, { sampleRate: espeakSampleRate, filters: postFilters }, signal)).samples;
      const samples = trimEdgeSilence(filtered, espeakSampleRate, { leadingSeconds: 0.05, trailingSeconds: sentencePauseSeconds });
      const trimmedSeconds = (samples.byteOffset - filtered.byteOffset) / filtered.BYTES_PER_ELEMENT / espeakSampleRate;
      const lengthSeconds = samples.length / espeakSampleRate;
      const within = (seconds: number): number => Math.min(Math.max(seconds - trimmedSeconds, 0), lengthSeconds);
      const words: TimedWord[] | undefined = spans?.flatMap((span, i) =>
        mapWordTimes(units[i]!.words, [{ startSeconds: within(span.startSeconds), endSeconds: within(span.endSeconds) }]),
      );
      applySpectralTilt(samples, espeakSampleRate, emotion.tiltDb);
      applyGainDb(samples, emotion.gainDb);
      guardPeak(samples);
      yield { waveform: { samples, sampleRate: espeakSampleRate, channels: 1 }, text: sentence, ...(words ? { words } : {}) };
    }
  }

  async close(): Promise<void> {}
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

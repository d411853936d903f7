/**
 * Piper voices (VITS exported to ONNX by rhasspy/piper, as rhasspy/piper-voices publishes them) on onnxruntime-node, each
 * voice in its own worker thread (src/models/onnx-worker.ts), started on the voice's first use: loading the engine only
 * reads the voices' configs.
 *
 * Text is normalised and cut into pieces as for Kokoro (sentences; a long first sentence after a long first clause). A
 * piece is phonemised by espeak-ng in the voice's own espeak voice, clause by clause, and becomes phoneme ids the way
 * Piper makes them (rhasspy/piper-phonemize and piper1-gpl, rewritten here):
 * - each clause's IPA with espeak-ng's language switches `(en)` removed, followed by its punctuation as a phoneme:
 *   `, : ;` with a space after them (the sentence goes on), `. ! ?` without;
 * - the string decomposed to NFD (`ç` -> `c` + U+0327), every code point one phoneme, mapped by the voice's
 *   `phoneme_map` if it has one;
 * - ids: `^`, `_`, then each phoneme's ids followed by `_`'s, then `$` (phonemes without an id are dropped, as Piper does).
 * One piece is one model run (`input`, `input_lengths`, `scales` = noise, length, noise_w from the voice's config, `sid`
 * for a voice with several speakers); a piece longer than maxPhonemes is cut at a word.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { resample } from '../../../audio/resample.js';
import { applyGainDb, applySpectralTilt, guardPeak } from '../../../audio/shaping.js';
import { trimEdgeSilence } from '../../../audio/silence.js';
import { VoxError } from '../../../core/errors.js';
import { piperDurationsOutput, piperModelWithDurations } from '../../../models/convert/piper.js';
import { sleepingThreadsOptions, WorkerSession } from '../../../models/onnx-worker.js';
import { prosody as emotionProsody } from '../emotion.js';
import type { BuiltinVoice, PullableVoice, SpeechPart, SynthesisRequest, SynthesizedChunk, Synthesizer } from '../synthesizer.js';
import { normalizationLanguage, normalizeText } from '../text/normalize.js';
import { joinPieces, speechPieces, splitClauses } from '../text/sentences.js';
import { withStress } from '../text/phonemes.js';
import { mapWordTimes, shareWords, spokenWords, type TimedSpan } from '../text/word-times.js';
import { phonemize } from './espeak-ng.js';

/**
 * The engine's output rate: that of medium and high voices. The Synthesizer interface has one rate per engine, so the
 * low and x_low voices' 16 kHz speech is resampled to it.
 */
export const piperSampleRate = 22050;
/** Piper's framing symbols: beginning and end of an utterance, and the pad after every phoneme. */
const bosSymbol = '^';
const eosSymbol = '$';
const padSymbol = '_';
/**
 * Phonemes per model run at most: about 20 s of speech. VITS attends over the whole input, so memory grows with its square;
 * a longer piece (a sentence without punctuation) is cut at a word.
 */
const maxPhonemes = 400;
/** Silence kept at a chunk's start, and at its end when the chunk stops inside a sentence (joins without gaps). */
const joinSilenceSeconds = { leading: 0.04, trailing: 0.1 };
/** Piper's quality grades, best last: a language is spoken by its best installed voice. */
const qualities = ['x_low', 'low', 'medium', 'high'];

/** Punctuation Piper keeps as a phoneme at a clause's end, by the character written (full-width forms as their ASCII). */
const clauseMarks: Record<string, string> = { ',': ',', '，': ',', '、': ',', ':': ':', '：': ':', ';': ';', '；': ';' };
const sentenceMarks: Record<string, string> = { '.': '.', '。': '.', '!': '!', '！': '!', '?': '?', '？': '?' };

/** The fields of a voice's `.onnx.json` that synthesis reads. */
export interface PiperVoiceConfig {
  audio: { sample_rate: number; quality?: string };
  espeak: { voice: string };
  inference: { noise_scale: number; length_scale: number; noise_w: number };
  phoneme_type?: string;
  phoneme_map?: Record<string, string[]>;
  phoneme_id_map: Record<string, number[]>;
  num_speakers: number;
  speaker_id_map?: Record<string, number>;
  language?: { code: string };
  dataset?: string;
}

/** An installed voice: its key (`en_US-joe-medium`) and the directory holding `<key>.onnx` and `<key>.onnx.json`. */
export interface PiperVoiceFiles {
  key: string;
  dir: string;
}

/** One voice model (one ONNX file), its worker started on first use. */
class PiperVoice {
  private session: Promise<WorkerSession> | undefined;

  constructor(
    readonly key: string,
    readonly modelPath: string,
    readonly config: PiperVoiceConfig,
    /** Lower-case BCP-47 (`en_US` -> `en-us`). */
    readonly language: string,
    readonly quality: string,
    readonly idMap: ReadonlyMap<string, readonly number[]>,
  ) {}

  /** Its session, loaded with the predicted durations as a second output where the graph has them (word times). */
  worker(threads: number): Promise<WorkerSession> {
    this.session ??= piperModelWithDurations(this.modelPath)
      .then((model) => WorkerSession.create(`Piper ${this.key}`, model ?? this.modelPath, sleepingThreadsOptions(threads)))
      .catch((error: unknown) => {
        // A failed start is tried again on the next request.
        this.session = undefined;
        throw error;
      });
    return this.session;
  }

  async close(): Promise<void> {
    const session = await this.session?.catch(() => undefined);
    this.session = undefined;
    await session?.close();
  }
}

/** A voice id: a voice model, and the speaker of a model with several. */
interface PiperSpeaker {
  id: string;
  name: string;
  voice: PiperVoice;
  speakerId?: number;
}

/** What is installed: the voices, and the catalog's voices that are not, best first. */
export interface PiperInstalled {
  voices: PiperVoiceFiles[];
  pullable: PullableVoice[];
}

/** Installed voices are looked for again at most this often (refresh()). */
const rescanIntervalMilliseconds = 5_000;

export class PiperSynthesizer implements Synthesizer {
  readonly engine = 'piper';
  readonly modelId = 'piper';
  readonly sampleRate = piperSampleRate;
  readonly description = 'Piper neural voice';
  readonly neural = true;
  readonly blends = false;
  /** The exported VITS graph predicts pitch inside the decoder (see synthesize). */
  readonly shiftsPitch = false;
  /** Best first: by quality, then in the order found. */
  private speakers: readonly PiperSpeaker[] = [];
  private notInstalled: readonly PullableVoice[] = [];
  /** Loaded voices, in the order found. */
  private readonly loaded: PiperVoice[] = [];
  private lastScanAt = 0;
  private scanning: Promise<void> | undefined;

  private constructor(
    private readonly threads: number,
    private readonly discover: (() => Promise<PiperInstalled>) | undefined,
  ) {}

  /**
   * Reads the voices' configs; each voice's model is loaded on its first use. No voice: an engine that speaks nothing.
   * `pullable`: the catalog's voices that are not installed, best first. `discover`: what is installed now, looked at
   * again by refresh().
   */
  static async load(
    options: { threads: number; discover?: () => Promise<PiperInstalled> } & Partial<PiperInstalled>,
  ): Promise<PiperSynthesizer> {
    const synthesizer = new PiperSynthesizer(options.threads, options.discover);
    await synthesizer.add({ voices: options.voices ?? [], pullable: options.pullable ?? [] });
    synthesizer.lastScanAt = Date.now();
    return synthesizer;
  }

  /**
   * Voices installed since it loaded (`voxd models pull` while the server runs) are added: looked for at most every
   * few seconds, on use. A voice removed meanwhile stays until a restart (a request may be speaking with it).
   */
  async refresh(): Promise<void> {
    if (!this.discover || Date.now() - this.lastScanAt < rescanIntervalMilliseconds) return;
    this.scanning ??= this.discover()
      .then((installed) => this.add(installed))
      .finally(() => {
        this.lastScanAt = Date.now();
        this.scanning = undefined;
      });
    return this.scanning;
  }

  private async add(installed: PiperInstalled): Promise<void> {
    const known = new Set(this.loaded.map((voice) => voice.key));
    this.loaded.push(...(await Promise.all(installed.voices.filter((files) => !known.has(files.key)).map(loadVoice))));
    const rank = (voice: PiperVoice): number => qualities.indexOf(voice.quality);
    this.speakers = this.loaded
      .map((voice, order) => ({ voice, order }))
      .sort((a, b) => rank(b.voice) - rank(a.voice) || a.order - b.order)
      .flatMap(({ voice }) => speakersOf(voice));
    this.notInstalled = installed.pullable;
  }

  pullable(): PullableVoice[] {
    return [...this.notInstalled];
  }

  languages(): string[] {
    return [...new Set(this.speakers.map((s) => s.voice.language))];
  }

  voices(): BuiltinVoice[] {
    return this.speakers.map((s) => ({ id: s.id, name: s.name, engine: this.engine, languages: [s.voice.language], gender: 'unknown' }));
  }

  /** Its voices' languages exactly, or a bare code (`de`) as its best voice's language of that family (`de-de`). */
  speaks(language: string): string | undefined {
    const tag = language.toLowerCase();
    const languages = this.languages();
    if (languages.includes(tag)) return tag;
    return tag.includes('-') ? undefined : languages.find((l) => l.startsWith(`${tag}-`));
  }

  /** A voice speaks its own language only: the requested voice when it does, else the best installed voice of the language. */
  voiceFor(language: string, voiceId?: string): string {
    const requested = this.speakers.find((s) => s.id === voiceId);
    if (requested?.voice.language === language) return requested.id;
    const best = this.speakers.find((s) => s.voice.language === language);
    if (!best) throw new VoxError('unsupported_value', `No Piper voice speaks '${language}'.`, { param: 'language' });
    return best.id;
  }

  /**
   * The phonemes of each piece `text` is spoken in (a sentence, or the long first clause of the first one), in the voice's
   * language.
   */
  async phonemes(text: string, voiceId: string, signal?: AbortSignal): Promise<string[][]> {
    const { voice } = this.speaker(voiceId);
    const pieces = speechPieces(normalizeText(text, normalizationLanguage(voice.language)));
    return Promise.all(pieces.map((piece) => piecePhonemes(piece.text, voice, signal)));
  }

  /** Phoneme ids with Piper's framing for the phonemes of one run. */
  ids(phonemes: readonly string[], voiceId: string): number[] {
    return phonemeIds(phonemes, this.speaker(voiceId).voice.idMap);
  }

  /**
   * One model run: framed ids -> samples at the voice's own rate. `lengthScale` defaults to the voice's; larger is
   * slower.
   */
  async run(voiceId: string, ids: readonly number[], lengthScale?: number): Promise<Float32Array> {
    return (await this.runTimed(voiceId, ids, lengthScale)).audio;
  }

  /** One model run with the decoder frames the model gave each id (absent for a graph without them, see loadVoice). */
  async runTimed(
    voiceId: string,
    ids: readonly number[],
    lengthScale?: number,
  ): Promise<{ audio: Float32Array; durations: Float32Array | undefined }> {
    const { voice, speakerId } = this.speaker(voiceId);
    const session = await voice.worker(this.threads);
    const { noise_scale: noiseScale, length_scale: voiceLengthScale, noise_w: noiseWidth } = voice.config.inference;
    const outputs = await session.run({
      input: session.tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]),
      input_lengths: session.tensor('int64', BigInt64Array.of(BigInt(ids.length)), [1]),
      scales: session.tensor('float32', Float32Array.of(noiseScale, lengthScale ?? voiceLengthScale, noiseWidth), [3]),
      ...(speakerId !== undefined ? { sid: session.tensor('int64', BigInt64Array.of(BigInt(speakerId)), [1]) } : {}),
    });
    return { audio: outputs.output!.data as Float32Array, durations: outputs[piperDurationsOutput]?.data as Float32Array | undefined };
  }

  /**
   * Emotions: rate through the length scale, energy and spectral tilt by shaping the output. F0 level and range cannot be
   * moved: the exported VITS graph predicts pitch inside the decoder with no input for it; nor can it whisper (no
   * unvoiced source), so a whisper is only the quieter, brighter, slower delivery.
   */
  async *synthesize(request: SynthesisRequest): AsyncIterable<SynthesizedChunk> {
    const { language, signal } = request;
    if (!('id' in request.voice))
      throw new VoxError('unsupported_value', 'Piper voices cannot be blended or given a style vector.', { param: 'voice' });
    const speaker = this.speaker(request.voice.id);
    const { voice } = speaker;
    if (voice.language !== language)
      throw new VoxError('unsupported_value', `Piper voice ${speaker.id} speaks '${voice.language}', not '${language}'.`, {
        param: 'language',
      });
    const emotion = emotionProsody[request.emotion ?? 'neutral'];
    const lengthScale = voice.config.inference.length_scale / ((request.speed ?? 1) * emotion.rate);
    const voiceRate = voice.config.audio.sample_rate;
    // Text with phonemes given by the caller is one piece, the words they stand for its text.
    const { parts } = request;
    const normalized = (text: string): string => normalizeText(text, normalizationLanguage(language));
    const pieces = parts
      ? [{ text: joinPieces(parts.map((p) => (p.ipa === undefined ? normalized(p.text) : p.text))), endsSentence: true }]
      : speechPieces(normalized(request.text));
    // The next piece is phonemised while this one runs; if the caller stops early its failure must not go unhandled.
    const phonemise = (i: number): Promise<string[]> | undefined => {
      const phonemes =
        i >= pieces.length
          ? undefined
          : parts
            ? partsPhonemes(
                parts.map((p) => (p.ipa === undefined ? { text: normalized(p.text) } : p)),
                voice,
                signal,
              )
            : piecePhonemes(pieces[i]!.text, voice, signal);
      phonemes?.catch(() => undefined);
      return phonemes;
    };
    signal?.throwIfAborted();
    // A voice's first use starts its worker while the first piece is phonemised (run() awaits the same start).
    voice.worker(this.threads).catch(() => undefined);
    let next = phonemise(0);
    for (let i = 0; i < pieces.length; i++) {
      signal?.throwIfAborted();
      const phonemes = await next!;
      next = phonemise(i + 1);
      // No letter this voice has an id for: nothing it can say (e.g. a script its espeak voice does not read).
      const runs = splitPhonemes(phonemes).filter((run) => run.some((phoneme) => /\p{L}/u.test(phoneme) && voice.idMap.has(phoneme)));
      const runGroups = runs.map((run) => wordGroups(run, voice.idMap));
      const runWords = shareWords(
        spokenWords(pieces[i]!.text),
        runGroups.map((groups) => groups.length),
      );
      for (const [r, run] of runs.entries()) {
        const { audio, durations } = await this.runTimed(speaker.id, phonemeIds(run, voice.idMap), lengthScale);
        const groups =
          durations && runGroups[r]!.length < runWords[r]!.length
            ? (splitJoinedWords(runGroups[r]!, await wordPhonemeCounts(runWords[r]!, voice, signal)) ?? runGroups[r]!)
            : runGroups[r]!;
        signal?.throwIfAborted();
        const endsSentence = r === runs.length - 1 && pieces[i]!.endsSentence;
        const trimmed = trimEdgeSilence(audio, voiceRate, {
          leadingSeconds: joinSilenceSeconds.leading,
          trailingSeconds: endsSentence ? Infinity : joinSilenceSeconds.trailing,
        });
        const timing = durations && {
          durations,
          samplesPerFrame: audio.length / durations.reduce((sum, frames) => sum + frames, 0),
          trimmedSamples: trimmed.byteOffset / trimmed.BYTES_PER_ELEMENT - audio.byteOffset / audio.BYTES_PER_ELEMENT,
          lengthSamples: trimmed.length,
          sampleRate: voiceRate,
        };
        const samples =
          voiceRate === piperSampleRate
            ? trimmed
            : (await resample({ samples: trimmed, sampleRate: voiceRate, channels: 1 }, piperSampleRate, signal)).samples;
        applySpectralTilt(samples, piperSampleRate, emotion.tiltDb);
        applyGainDb(samples, emotion.gainDb);
        guardPeak(samples);
        yield {
          waveform: { samples, sampleRate: piperSampleRate, channels: 1 },
          text: pieces[i]!.text,
          ...(timing
            ? {
                words: mapWordTimes(
                  runWords[r]!,
                  groups.map((group) => groupSpan(group, timing)),
                ),
              }
            : {}),
        };
      }
    }
  }

  async close(): Promise<void> {
    await this.scanning?.catch(() => undefined);
    await Promise.all(this.loaded.map((voice) => voice.close()));
  }

  private speaker(voiceId: string): PiperSpeaker {
    const speaker = this.speakers.find((s) => s.id === voiceId);
    if (!speaker) throw new VoxError('not_found', `Unknown Piper voice '${voiceId}'.`, { param: 'voice' });
    return speaker;
  }
}

/** Ids with Piper's framing: `^ _`, each phoneme's ids and `_`, then `$`. */
export function phonemeIds(phonemes: readonly string[], idMap: ReadonlyMap<string, readonly number[]>): number[] {
  const symbol = (name: string): readonly number[] => {
    const ids = idMap.get(name);
    if (!ids) throw new VoxError('internal', `The Piper voice has no id for '${name}'.`);
    return ids;
  };
  const pad = symbol(padSymbol);
  const ids = [...symbol(bosSymbol), ...pad];
  for (const phoneme of phonemes) {
    const mapped = idMap.get(phoneme);
    // A phoneme the voice was not trained with is dropped, as Piper does.
    if (mapped) ids.push(...mapped, ...pad);
  }
  ids.push(...symbol(eosSymbol));
  return ids;
}

/** One piece's phonemes: its clauses phonemised in one espeak-ng run, each followed by its punctuation as Piper keeps it. */
async function piecePhonemes(text: string, voice: PiperVoice, signal?: AbortSignal): Promise<string[]> {
  const clauses = splitClauses(text).map((clause) => {
    // The mark that ends the clause, looked for behind closing quotes and brackets.
    const body = clause.replace(/["'”’»)\]]+$/u, '');
    const last = body.at(-1) ?? '';
    const mark = clauseMarks[last] !== undefined ? `${clauseMarks[last]} ` : (sentenceMarks[last] ?? '');
    // espeak-ng reads the words; the mark is added as Piper adds it (espeak-ng's IPA output has no punctuation).
    const words = body.replace(/[\p{P}\s]+$/u, '');
    return { words, mark, speaks: /[\p{L}\p{N}]/u.test(words) };
  });
  const spoken = clauses.filter((c) => c.speaks);
  const ipa = await phonemize(
    spoken.map((c) => c.words),
    voice.config.espeak.voice,
    signal,
  );
  let out = '';
  for (const [i, clause] of spoken.entries()) {
    // phonemize() ties multi-letter phonemes with `^`; Piper's phonemes are code points.
    const phonemes = ipa[i]!.replace(/\^/g, '');
    if (phonemes.length === 0) continue;
    if (out.length > 0 && !out.endsWith(' ')) out += ' ';
    out += phonemes + clause.mark;
  }
  return voicePhonemes(out, voice);
}

/**
 * Phonemes of text with parts said as given IPA, in one utterance: punctuation opening a text part closes what precedes
 * it, as in a sentence read whole; the utterance ends as a sentence (without its end joe said /bɹˈɛd/ as "brett").
 */
async function partsPhonemes(parts: readonly SpeechPart[], voice: PiperVoice, signal?: AbortSignal): Promise<string[]> {
  const pieces = await Promise.all(
    parts.map(async (part) => {
      if (part.ipa !== undefined) return { mark: '', phonemes: voicePhonemes(withStress(part.ipa), voice) };
      const opening = /^[\p{P}\s]*/u.exec(part.text)![0].trim().at(-1) ?? '';
      const phonemes = await piecePhonemes(part.text.slice(opening ? part.text.indexOf(opening) + 1 : 0), voice, signal);
      return { mark: clauseMarks[opening] ?? sentenceMarks[opening] ?? '', phonemes };
    }),
  );
  const out: string[] = [];
  for (const { mark, phonemes } of pieces) {
    if (mark) out.push(...voicePhonemes(mark, voice));
    if (phonemes.length === 0) continue;
    if (out.length > 0 && out.at(-1) !== ' ') out.push(' ');
    out.push(...phonemes);
  }
  if (!Object.values(sentenceMarks).includes(out.at(-1) ?? '')) out.push(...voicePhonemes('.', voice));
  return out;
}

/** Code points after NFD, mapped by the voice's phoneme_map (ties and stray spaces of written IPA dropped). */
function voicePhonemes(ipa: string, voice: PiperVoice): string[] {
  const phonemeMap = voice.config.phoneme_map ?? {};
  return [...ipa.replace(/\^|\u0361|\u035c/gu, '').normalize('NFD')].flatMap((phoneme) => phonemeMap[phoneme] ?? [phoneme]);
}

/** A spoken word of a run: the positions of its phonemes' first ids and of the pad after its last phoneme. */
interface WordGroup {
  phonemeIds: number[];
  endId: number;
}

/** Punctuation Piper keeps (a pause of its own) and the word space: no part of a word. */
const pauses = new Set([' ', ...Object.values(clauseMarks), ...Object.values(sentenceMarks)]);

/**
 * The words of a run as Piper reads them: phonemes between spaces, punctuation (a pause of its own) left out. Positions
 * follow phonemeIds' framing.
 */
export function wordGroups(phonemes: readonly string[], idMap: ReadonlyMap<string, readonly number[]>): WordGroup[] {
  const padLength = idMap.get(padSymbol)?.length ?? 1;
  const groups: WordGroup[] = [];
  let position = (idMap.get(bosSymbol)?.length ?? 1) + padLength;
  let open: WordGroup | undefined;
  for (const phoneme of phonemes) {
    const mapped = idMap.get(phoneme);
    if (phoneme === ' ') open = undefined;
    if (!mapped) continue;
    const end = position + mapped.length + padLength;
    if (!pauses.has(phoneme)) {
      if (open) {
        open.phonemeIds.push(position);
        open.endId = end;
      } else {
        open = { phonemeIds: [position], endId: end };
        groups.push(open);
      }
    }
    position = end;
  }
  return groups;
}

/**
 * Word times read this much earlier than the predicted frames place them: against faster-whisper's word times on the same
 * audio they came 0.093 s late (median over the tuning half of the English sentences of bench/tts-timestamps.ts).
 */
const wordLeadSeconds = 0.09;

/** The seconds of a run's trimmed audio a word's ids cover, from the decoder frames of each id. */
function groupSpan(
  group: WordGroup,
  timing: { durations: Float32Array; samplesPerFrame: number; trimmedSamples: number; lengthSamples: number; sampleRate: number },
): TimedSpan {
  const framesBefore = (position: number): number => {
    let frames = 0;
    for (let p = 0; p < position; p++) frames += timing.durations[p]!;
    return frames;
  };
  const seconds = (frames: number): number =>
    Math.min(
      Math.max(frames * timing.samplesPerFrame - timing.trimmedSamples - wordLeadSeconds * timing.sampleRate, 0),
      timing.lengthSamples,
    ) / timing.sampleRate;
  return { startSeconds: seconds(framesBefore(group.phonemeIds[0]!)), endSeconds: seconds(framesBefore(group.endId)) };
}

/**
 * One group per word where espeak-ng read several words as one (`of the` as /ʌvðə/): each group is given the run of words
 * whose phonemes (each word phonemised alone: `wordPhonemes`) best match its length in number, and is cut among them at
 * the phoneme their shares of it reach. Undefined when there are more groups than words.
 */
export function splitJoinedWords(groups: readonly WordGroup[], wordPhonemes: readonly number[]): WordGroup[] | undefined {
  const g = groups.length;
  const n = wordPhonemes.length;
  if (g > n || g === 0) return undefined;
  const sums = [0];
  for (const count of wordPhonemes) sums.push(sums.at(-1)! + count);
  // best[k][j]: the least mismatch with the first k groups covering the first j words; from[k][j]: where group k-1 began.
  const best = Array.from({ length: g + 1 }, () => new Array<number>(n + 1).fill(Infinity));
  const from = Array.from({ length: g + 1 }, () => new Array<number>(n + 1).fill(0));
  best[0]![0] = 0;
  for (let k = 1; k <= g; k++) {
    for (let j = k; j <= n - (g - k); j++) {
      for (let i = k - 1; i < j; i++) {
        const cost = best[k - 1]![i]! + Math.abs(groups[k - 1]!.phonemeIds.length - (sums[j]! - sums[i]!));
        if (cost < best[k]![j]!) {
          best[k]![j] = cost;
          from[k]![j] = i;
        }
      }
    }
  }
  const blocks: Array<{ first: number; end: number }> = [];
  for (let k = g, j = n; k > 0; k--) {
    const i = from[k]![j]!;
    blocks.unshift({ first: i, end: j });
    j = i;
  }
  return blocks.flatMap(({ first, end }, k) => {
    const group = groups[k]!;
    const total = sums[end]! - sums[first]!;
    const cuts = Array.from({ length: end - first + 1 }, (_, w) =>
      Math.round(((sums[first + w]! - sums[first]!) / Math.max(total, 1)) * group.phonemeIds.length),
    );
    return Array.from({ length: end - first }, (_, w) => {
      // At least one phoneme a word, in order.
      const start = Math.min(Math.max(cuts[w]!, w), group.phonemeIds.length - (end - first - w));
      const stop = w === end - first - 1 ? group.phonemeIds.length : Math.max(start + 1, cuts[w + 1]!);
      return {
        phonemeIds: group.phonemeIds.slice(start, stop),
        endId: stop < group.phonemeIds.length ? group.phonemeIds[stop]! : group.endId,
      };
    });
  });
}

/** How many phonemes of a word (a pause excepted) each word has, phonemised alone in the voice's espeak voice. */
async function wordPhonemeCounts(words: readonly string[], voice: PiperVoice, signal?: AbortSignal): Promise<number[]> {
  const bare = words.map((word) => word.replace(/^\p{P}+|\p{P}+$/gu, ''));
  const ipa = await phonemize(bare, voice.config.espeak.voice, signal);
  return ipa.map(
    (phonemes) => voicePhonemes(phonemes.replace(/\^/g, ''), voice).filter((p) => voice.idMap.has(p) && !pauses.has(p)).length,
  );
}

/** Runs of at most maxPhonemes, each cut after the last word space of its second half. */
function splitPhonemes(phonemes: string[]): string[][] {
  const runs: string[][] = [];
  let start = 0;
  while (phonemes.length - start > maxPhonemes) {
    let cut = start + maxPhonemes;
    for (let p = cut; p > start + maxPhonemes / 2; p--) {
      if (phonemes[p - 1] === ' ') {
        cut = p;
        break;
      }
    }
    runs.push(phonemes.slice(start, cut));
    start = cut;
  }
  runs.push(phonemes.slice(start));
  return runs;
}

async function loadVoice(files: PiperVoiceFiles): Promise<PiperVoice> {
  const configPath = path.join(files.dir, `${files.key}.onnx.json`);
  const config = JSON.parse(await readFile(configPath, 'utf8')) as PiperVoiceConfig;
  if ((config.phoneme_type ?? 'espeak') !== 'espeak')
    throw new VoxError('internal', `Piper voice ${files.key} uses '${config.phoneme_type}' phonemes; voxd reads espeak-ng's only.`);
  const [code = '', , keyQuality = ''] = files.key.split('-');
  const language = (config.language?.code ?? code).toLowerCase().replace(/_/g, '-');
  return new PiperVoice(
    files.key,
    path.join(files.dir, `${files.key}.onnx`),
    config,
    language,
    config.audio.quality ?? keyQuality,
    new Map(Object.entries(config.phoneme_id_map)),
  );
}

/** A voice id per speaker: `piper-<key>` for a voice with one, `piper-<key>-<speaker>` for each of several (`sid`). */
function speakersOf(voice: PiperVoice): PiperSpeaker[] {
  const [, dataset = voice.key] = voice.key.split('-');
  const title = `${dataset.charAt(0).toUpperCase()}${dataset.slice(1)}`;
  if (voice.config.num_speakers <= 1) return [{ id: `piper-${voice.key}`, name: `${title} (Piper, ${voice.quality})`, voice }];
  const named = Object.entries(voice.config.speaker_id_map ?? {});
  const speakers =
    named.length > 0 ? named : Array.from({ length: voice.config.num_speakers }, (_, sid) => [String(sid), sid] as [string, number]);
  return speakers
    .sort(([, a], [, b]) => a - b)
    .map(([name, speakerId]) => ({
      id: `piper-${voice.key}-${name.replace(/[^A-Za-z0-9_.]+/g, '_')}`,
      name: `${title} ${name} (Piper, ${voice.quality})`,
      voice,
      speakerId,
    }));
}

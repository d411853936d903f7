/**
 * decode (16 kHz mono, streamed) -> Silero VAD -> speech-only chunks -> ASR per chunk (times mapped back)
 * -> optional diarization (fed the decoded audio during the recognition pass) -> words assigned to speakers -> segments
 * split on speaker change, reaching into the time another speaker talks over them.
 * Two streaming passes over the file (VAD, then ASR) keep memory flat for multi-hour inputs. With language=auto a pass
 * between them detects the language of each stretch of speech (language-stretches.ts), and diarization runs there, so
 * that a speaker's other turns inform each turn's language; chunks are then cut where the language changes.
 */
import { musicWithoutSpeech, type AudioEventDetector, type MusicWithoutSpeechOptions } from '../../audio/audio-events.js';
import { decodeBlocks } from '../../audio/decode.js';
import { silencedIn, speechSegments, type SileroVad, type SpeechSegment } from '../../audio/vad.js';
import { pieceEndSeconds, planChunks, SampleWindow, toOriginalSeconds, type SpeechChunk } from './chunks.js';
import type { Transcript, TranscriptSegment, TranscriptWord } from './formats.js';
import { decodingPrompt, findKeyterms, repeatsItself, snapKeyterms } from './keyterms.js';
import { scriptConverter } from './script.js';
import type { ChunkTranscript, RecognizedSegment, RecognizedWord, Transcriber } from './transcriber.js';
import { concatSamples } from '../../audio/waveform.js';
import {
  assignLanguages,
  majorityLanguage,
  minDetectedStretchSeconds,
  splitByLanguage,
  type LanguagePriorWeights,
  type LanguageStretch,
} from './language-stretches.js';

export const asrSampleRate = 16000;
/** Whisper sees 30 s windows; a little headroom keeps padded chunks inside one window. */
const maxChunkSeconds = 28;
/**
 * Context kept around speech regions. Cut 0.4 s before the speech, Whisper lost words it gets right on the uncut clip
 * (../shared/eval/asr, non-English WER 23.8%; 14.3% with 1.5 s before). After the speech, 1.5 s gained one more word
 * (12.7%) but invites captions of what follows ("[♪ INTRO MUSIC PLAYING" on a music stem), so it stays 0.4 s.
 */
const speechPadBeforeSeconds = 1.5;
const speechPadAfterSeconds = 0.4;
const blockSeconds = 10;
/** A word's end is the next word's start (DTW); across a pause that would stretch it, so it is capped. */
const maxWordSeconds = 1.5;

export interface SpeakerTurn {
  speaker: string;
  startSeconds: number;
  endSeconds: number;
}

/** Speaker diarization over the audio the pipeline decodes. */
export interface Diarizer {
  /** The recording's 16 kHz mono samples, from its start, in order. */
  addAudio(samples: Float32Array, signal?: AbortSignal): Promise<void>;
  /** Speaker turns of everything added; turns of different speakers overlap where they talk at once. */
  finish(options: { numSpeakers?: number; minSpeakers?: number; maxSpeakers?: number }, signal?: AbortSignal): Promise<SpeakerTurn[]>;
}

export interface PipelineRequest {
  path: string;
  /** Only this channel of the file (0-based; multichannel): by default all channels mixed down. */
  channel?: number;
  language: string;
  /** The caller's language tag as given (region and script kept, e.g. 'zh-TW'); chooses the script of the output. */
  languageTag?: string;
  /** translate: English text whatever the spoken language (Whisper's translate task). Default transcribe. */
  task?: 'transcribe' | 'translate';
  prompt?: string;
  /** Terms expected in the audio (keyterms.ts): in each chunk's prompt, snapped to, reported as found_keyterms. */
  keyterms?: string[];
  temperature?: number;
  diarizer?: Diarizer;
  speakers: { numSpeakers?: number; minSpeakers?: number; maxSpeakers?: number };
  maxAudioSeconds: number;
  /** The request field the file came in, named by errors. Default 'audio'. */
  param?: string;
  signal?: AbortSignal;
  /** Progress: the speech-detection pass as the first tenth (by `expectedSeconds`), then chunk i of n. */
  onProgress?: (progress: { stage: string; fraction: number }) => void;
  /** The input's length as measured before decoding (NaN or absent: the detection pass reports no fraction). */
  expectedSeconds?: number;
  /** language=auto: how much the other stretches' languages weigh on each stretch's (benches tune it; default otherwise). */
  languagePriorWeights?: LanguagePriorWeights;
  /** What counts as music without speech, with deps.audioEvents (benches tune it; default otherwise). */
  musicWithoutSpeech?: MusicWithoutSpeechOptions;
}

/** A chunk of speech and the language it is decoded in ('auto': detected on the chunk, for engines without detectLanguage). */
type LanguageChunk = SpeechChunk & { language: string };

export interface RecognizedChunk {
  chunk: SpeechChunk;
  segments: RecognizedSegment[];
  temperature: number;
  /** The language the chunk was decoded in. */
  language: string;
}

/** Share of the progress bar for the speech-detection pass (about that share of the time, on CPU). */
const detectionShare = 0.1;

export interface PipelineDependencies {
  transcriber: Transcriber;
  vad: SileroVad;
  /**
   * Silero takes the onset of some music for speech (the first 1.5 s of eval/sep dnr_mix01's music stem), and Whisper
   * captions what it is given there ("Music"). With the audio-event detector, stretches it hears as music or singing
   * without speech are not speech to the pipeline. Without it, the VAD alone decides.
   */
  audioEvents?: AudioEventDetector;
}

/**
 * Files up to this long are decoded once, in the speech-detection pass, and its blocks replayed to the later passes (at
 * most 19 MB): each pass's ffmpeg run cost a 1 s clip about 0.13 s of CPU (issue 35). Longer files are decoded again for
 * each pass, which keeps memory flat however long they are.
 */
const replayedMaxSeconds = 300;

async function* replay(blocks: Float32Array[]): AsyncGenerator<Float32Array> {
  yield* blocks;
}

export async function transcribeFile(deps: PipelineDependencies, request: PipelineRequest): Promise<Transcript> {
  const stream = () =>
    decodeBlocks(request.path, {
      sampleRate: asrSampleRate,
      channels: 1,
      ...(request.channel !== undefined ? { channel: request.channel } : {}),
      blockFrames: asrSampleRate * blockSeconds,
      maxSeconds: request.maxAudioSeconds,
      param: request.param,
      signal: request.signal,
    });

  // Pass 1: voice activity, and audio events from the same blocks.
  const vadStream = deps.vad.stream();
  const probabilityBlocks: Float32Array[] = [];
  let totalSamples = 0;
  let decoded: Float32Array[] | undefined = [];
  const detected = async function* (): AsyncGenerator<Float32Array> {
    for await (const block of stream()) {
      totalSamples += block.length;
      if (totalSamples <= replayedMaxSeconds * asrSampleRate) decoded?.push(block);
      else decoded = undefined;
      probabilityBlocks.push(await vadStream.push(block, request.signal));
      const expected = request.expectedSeconds ?? Number.NaN;
      if (Number.isFinite(expected) && expected > 0)
        request.onProgress?.({
          stage: 'detecting speech',
          fraction: detectionShare * Math.min(1, totalSamples / asrSampleRate / expected),
        });
      yield block;
    }
  };
  let silenced: SpeechSegment[] = [];
  if (deps.audioEvents)
    silenced = musicWithoutSpeech(await deps.audioEvents.probabilities(detected(), request.signal), request.musicWithoutSpeech);
  else for await (const block of detected()) void block;
  probabilityBlocks.push(await vadStream.flush());
  const decode = (): AsyncGenerator<Float32Array> => (decoded ? replay(decoded) : stream());
  const probabilities = silencedIn(concatSamples(probabilityBlocks), silenced);
  const durationSeconds = totalSamples / asrSampleRate;
  const segments = speechSegments(probabilities, durationSeconds, {
    minSilenceSeconds: 1,
    padBeforeSeconds: speechPadBeforeSeconds,
    padAfterSeconds: speechPadAfterSeconds,
    maxSpeechSeconds: maxChunkSeconds - speechPadBeforeSeconds - speechPadAfterSeconds,
  });
  const speech = speechSegments(probabilities, durationSeconds, {
    minSilenceSeconds: skippedSpeechMinSilenceSeconds,
    padBeforeSeconds: 0,
    padAfterSeconds: 0,
  });

  let chunks: LanguageChunk[] = planChunks(segments, maxChunkSeconds).map((chunk) => ({ ...chunk, language: request.language }));
  let language = request.language;
  let languageProbability = request.language === 'auto' ? 0 : 1;
  // Known before recognition only when the languages per stretch asked for them.
  let turns: SpeakerTurn[] | undefined;
  const detectLanguage = deps.transcriber.detectLanguage?.bind(deps.transcriber);
  if (request.language === 'auto' && detectLanguage && speech.length > 0) {
    const stretches = await detectStretchLanguages(decode(), speech, detectLanguage, request.diarizer, request.signal);
    request.onProgress?.({ stage: 'detecting languages', fraction: detectionShare });
    if (request.diarizer) {
      turns = await request.diarizer.finish(request.speakers, request.signal);
      for (const stretch of stretches) stretch.speaker = speakerAt(turns, stretch.startSeconds, stretch.endSeconds);
    }
    const languages = assignLanguages(stretches, request.languagePriorWeights);
    const assigned = stretches.map((stretch, i) => ({ ...stretch, language: languages[i]! }));
    const parts = splitByLanguage(segments, assigned, { padBeforeSeconds: speechPadBeforeSeconds, padAfterSeconds: speechPadAfterSeconds });
    // Consecutive parts of one language are chunked together, as a recording in one language is.
    chunks = [];
    for (let from = 0; from < parts.length; ) {
      let to = from + 1;
      while (to < parts.length && parts[to]!.language === parts[from]!.language) to++;
      chunks.push(...planChunks(parts.slice(from, to), maxChunkSeconds).map((chunk) => ({ ...chunk, language: parts[from]!.language })));
      from = to;
    }
    language = majorityLanguage(assigned) ?? 'en';
    const sure = assigned.filter((s) => s.language === language && s.probabilities);
    const sureSeconds = sure.reduce((sum, s) => sum + s.endSeconds - s.startSeconds, 0);
    languageProbability =
      sureSeconds > 0
        ? sure.reduce((sum, s) => sum + (s.endSeconds - s.startSeconds) * (s.probabilities![language] ?? 0), 0) / sureSeconds
        : 0;
  }

  // Pass 2: recognition, chunk by chunk, while decoding.
  const recognized: RecognizedChunk[] = [];
  let previousText = '';
  let previousLanguage: string | undefined;
  let chunkIndex = 0;
  const translate = request.task === 'translate';
  const keyterms = request.keyterms ?? [];
  let omittedKeyterms = 0;
  const window = new SampleWindow();
  const runReadyChunks = async (final: boolean): Promise<void> => {
    while (chunkIndex < chunks.length) {
      const chunk = chunks[chunkIndex]!;
      const chunkLanguage = chunk.language === 'auto' ? language : chunk.language;
      // Text in another language as the prompt invites Whisper to go on in that one.
      if (previousLanguage !== undefined && previousLanguage !== chunkLanguage) previousText = '';
      const endSample = Math.ceil(chunk.originalEndSeconds * asrSampleRate);
      if (!final && window.availableUntil < endSample) return;
      const samples = concatSamples(
        chunk.pieces.map((p) =>
          window.take(
            Math.floor(p.originalStartSeconds * asrSampleRate),
            Math.floor((p.originalStartSeconds + p.durationSeconds) * asrSampleRate),
          ),
        ),
      );
      const { prompt, omittedKeyterms: omitted } = decodingPrompt(keyterms, request.prompt, previousText);
      omittedKeyterms = Math.max(omittedKeyterms, omitted);
      const decode = (withPrompt: string) =>
        deps.transcriber.transcribe(samples, {
          language: chunkLanguage,
          prompt: withPrompt,
          ...(translate ? { translate } : {}),
          temperature: request.temperature ?? 0,
          signal: request.signal,
        });
      let chunkPrompt = prompt;
      let result = await decode(chunkPrompt);
      // Terms in the prompt can make Whisper say the chunk twice over: such a chunk is decoded as without terms.
      if (keyterms.length > 0 && repeatsItself(result.segments.map((s) => s.text).join(''))) {
        chunkPrompt = decodingPrompt([], request.prompt, previousText).prompt;
        result = await decode(chunkPrompt);
      }
      if (previousText !== '' && losesSpeech(chunk, result.segments, speech)) {
        const unprompted = decodingPrompt(keyterms, request.prompt, '').prompt;
        const fresh = await decode(unprompted);
        if (uncoveredSeconds(chunk, fresh.segments, speech) < uncoveredSeconds(chunk, result.segments, speech)) {
          chunkPrompt = unprompted;
          result = fresh;
        }
      }
      if (language === 'auto') {
        // Without per-stretch detection the first chunk decides, as in faster-whisper: later chunks stay consistent.
        language = result.language;
        languageProbability = result.languageProbability;
      }
      const decodedLanguage = chunkLanguage === 'auto' ? result.language : chunkLanguage;
      const recoveredAt: number[] = [];
      for (const range of skippedSpeech(chunk, result.segments, speech)) {
        const samples = window.take(Math.floor(range.startSeconds * asrSampleRate), Math.floor(range.endSeconds * asrSampleRate));
        const recovered = await deps.transcriber.transcribe(samples, {
          language: decodedLanguage,
          prompt: chunkPrompt,
          ...(translate ? { translate } : {}),
          temperature: request.temperature ?? 0,
          signal: request.signal,
        });
        const kept = recovered.segments.filter((segment) => isRecoveredSpeech(segment, result.segments));
        if (kept.length === 0) continue;
        recognized.push({
          chunk: planChunks([range], maxChunkSeconds)[0]!,
          segments: kept,
          temperature: recovered.temperature,
          language: decodedLanguage,
        });
        recoveredAt.push(range.startSeconds);
      }
      recognized.push({
        chunk,
        segments: splitAt(chunk, result.segments, recoveredAt),
        temperature: result.temperature,
        language: decodedLanguage,
      });
      previousText = conditioningText(result);
      previousLanguage = decodedLanguage;
      window.discardBefore(Math.floor((chunks[chunkIndex + 1]?.originalStartSeconds ?? chunk.originalEndSeconds) * asrSampleRate));
      chunkIndex++;
      request.onProgress?.({ stage: 'transcribing', fraction: detectionShare + (1 - detectionShare) * (chunkIndex / chunks.length) });
    }
  };
  if (chunks.length > 0) {
    for await (const block of decode()) {
      window.push(block);
      if (!turns) await request.diarizer?.addAudio(block, request.signal);
      await runReadyChunks(false);
    }
    await runReadyChunks(true);
  }

  turns ??= (await request.diarizer?.finish(request.speakers, request.signal)) ?? [];
  const builtSegments = buildSegments(
    recognized.map((r) => {
      // A translation is English: the source language's script does not apply.
      const toScript = translate ? undefined : scriptConverter(r.language, request.languageTag ?? r.language);
      return toScript
        ? {
            ...r,
            segments: r.segments.map((s) => ({
              ...s,
              text: toScript(s.text),
              words: s.words.map((w) => ({ ...w, text: toScript(w.text) })),
            })),
          }
        : r;
    }),
    turns,
  );
  const transcriptSegments = keyterms.length > 0 ? snapKeyterms(builtSegments, keyterms, translate ? 'en' : language) : builtSegments;
  const speakers = summarizeSpeakers(turns);
  const warnings = transcriptWarnings({
    acceptedTemperatures: recognized.map((r) => r.temperature),
    requestedTemperature: request.temperature ?? 0,
    requestedLanguage: request.language,
    language,
    languageProbability,
    ...(request.diarizer ? { speakersFound: speakers.length, speakersRequested: request.speakers } : {}),
    ...(omittedKeyterms > 0 ? { keytermsOmittedFromPrompt: omittedKeyterms } : {}),
  });
  return {
    text: transcriptSegments
      .map((s) => s.text)
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim(),
    language: language === 'auto' ? 'unknown' : language,
    language_probability: languageProbability,
    duration: durationSeconds,
    segments: transcriptSegments,
    speakers,
    model: deps.transcriber.modelId,
    warnings,
    ...(keyterms.length > 0 ? { found_keyterms: findKeyterms(transcriptSegments, keyterms) } : {}),
  };
}

/**
 * Whisper can pass over a quiet sentence between louder ones: its decoding jumps from one timestamp to the next. LDC93S1
 * (20 dB under its neighbours) was missing from all 16 repeats of the 10-minute bench file, and from the six English eval
 * utterances said once, though decoded alone it comes back; faster-whisper on the same weights kept it. Which window
 * passes it over changes with a tenth of a second of context, so no decoding setting fixes it. Instead, speech the VAD
 * found that no recognised word touches is decoded again on its own, with the chunk's prompt: stretches at least
 * skippedSpeechMinSeconds long (unpadded, split at pauses of skippedSpeechMinSilenceSeconds), so a cough or a breath
 * costs nothing.
 */
const skippedSpeechMinSeconds = 1;
const skippedSpeechMinSilenceSeconds = 0.3;
/**
 * Seconds of a stretch that words must overlap for it to count as said. Not any overlap: the last word before a
 * skipped sentence may end (capped at maxWordSeconds) a moment into it, which hid the sentence (issue 35: LDC93S1 after
 * JFK's "...for your country", whose last word ran 0.07 s into it). A short word lasts about this long.
 */
const minSaidSeconds = 0.25;
/** Words that start at the same instant as the word before, at most (a share of the chunk's words): see skippedSpeech. */
const maxStackedWordShare = 0.1;

/**
 * Audio ranges (original seconds) to decode again: each stretch of `speech` in the chunk that none of its words
 * overlaps, padded as chunks are but never into the words around it, nor outside the chunk; ranges that overlap are
 * joined, so no speech is decoded twice.
 */
export function skippedSpeech(chunk: SpeechChunk, segments: RecognizedSegment[], speech: SpeechSegment[]): SpeechSegment[] {
  const recognizedWords = segments.flatMap((segment) => segment.words);
  // DTW that failed puts many words at one instant (seen on a chunk of two sentences said three times): its word times
  // say nothing about what was skipped.
  const stacked = recognizedWords.filter((w, i) => i > 0 && w.startSeconds === recognizedWords[i - 1]!.startSeconds).length;
  if (stacked > recognizedWords.length * maxStackedWordShare) return [];
  const words = recognizedWords.map((w) => originalWordSpan(chunk, w));
  const ranges: SpeechSegment[] = [];
  for (const stretch of speech) {
    const startSeconds = Math.max(stretch.startSeconds, chunk.originalStartSeconds);
    const endSeconds = Math.min(stretch.endSeconds, chunk.originalEndSeconds);
    if (endSeconds - startSeconds < skippedSpeechMinSeconds) continue;
    const saidSeconds = words.reduce(
      (sum, w) => sum + Math.max(0, Math.min(w.endSeconds, endSeconds) - Math.max(w.startSeconds, startSeconds)),
      0,
    );
    if (saidSeconds >= minSaidSeconds) continue;
    // A word before the stretch ends before it: the VAD found a pause there, whatever the word's (capped) end says.
    const before = words
      .filter((w) => w.startSeconds < startSeconds)
      .reduce((latest, w) => Math.max(latest, Math.min(w.endSeconds, startSeconds)), chunk.originalStartSeconds);
    const after = words
      .filter((w) => w.startSeconds >= startSeconds)
      .reduce((earliest, w) => Math.min(earliest, w.startSeconds), chunk.originalEndSeconds);
    const range = {
      startSeconds: Math.max(startSeconds - speechPadBeforeSeconds, before),
      endSeconds: Math.min(endSeconds + speechPadAfterSeconds, after),
    };
    const last = ranges.at(-1);
    if (last && range.startSeconds < last.endSeconds) last.endSeconds = Math.max(last.endSeconds, range.endSeconds);
    else ranges.push(range);
  }
  return ranges;
}

/**
 * Whisper conditioned on the previous chunk's text can write that text again in place of the chunk's own speech, when
 * the speech repeats what came before (IVR prompts, a lecture's refrain): a chunk of 18 s came back as one 30 s segment
 * copying the prompt's sentence, and the chunk's three sentences were lost (issue 35, the long files of
 * bench/long-files.ts). Such a chunk is decoded again without the previous text, as faster-whisper does after a
 * fallback, and the decoding that leaves less speech without words is kept. The signs: speech the VAD found that no
 * word touches (as skippedSpeech finds it), or a segment that ends after the chunk's audio.
 */
export function losesSpeech(chunk: SpeechChunk, segments: RecognizedSegment[], speech: SpeechSegment[]): boolean {
  const beyondEnd = segments.some((s) => s.endSeconds > chunk.durationSeconds + pastEndToleranceSeconds);
  return beyondEnd || skippedSpeech(chunk, segments, speech).length > 0;
}

/** How far past its chunk's audio a segment may end before its times (and so its text) are taken as unanchored. */
const pastEndToleranceSeconds = 1;

/** Seconds of the chunk's speech that no recognised word touches (stretches as skippedSpeech finds them). */
function uncoveredSeconds(chunk: SpeechChunk, segments: RecognizedSegment[], speech: SpeechSegment[]): number {
  return skippedSpeech(chunk, segments, speech).reduce((sum, range) => sum + range.endSeconds - range.startSeconds, 0);
}

/**
 * Segments split between two words where recovered speech starts (original seconds), so that the recovered text lands
 * between them: whisper may end a segment with the first words after the sentence it passed over ("... his gospel. It
 * was"), which would otherwise carry them in front of it.
 */
export function splitAt(chunk: SpeechChunk, segments: RecognizedSegment[], cutSeconds: number[]): RecognizedSegment[] {
  if (cutSeconds.length === 0) return segments;
  return segments.flatMap((segment) => {
    const parts: RecognizedWord[][] = [];
    for (const word of segment.words) {
      const start = toOriginalSeconds(chunk, word.startSeconds);
      const previous = parts.at(-1)?.at(-1);
      const cut = previous && cutSeconds.some((at) => toOriginalSeconds(chunk, previous.startSeconds) < at && at <= start);
      if (!previous || cut) parts.push([word]);
      else parts.at(-1)!.push(word);
    }
    if (parts.length < 2) return [segment];
    return parts.map((words, i) => ({
      ...segment,
      startSeconds: i === 0 ? segment.startSeconds : words[0]!.startSeconds,
      endSeconds: i === parts.length - 1 ? segment.endSeconds : parts[i + 1]![0]!.startSeconds,
      text: words.map((w) => w.text).join(''),
      words,
    }));
  });
}

/**
 * Text recovered from skipped speech is kept only where Whisper is sure of it, and only when the chunk does not already
 * say it. VAD also takes laughter or a cough for speech, which decoded alone comes back as an improbable "Thank you."
 * (Whisper's own no-speech test uses the same two thresholds, joined by and: here either one drops the text). And the
 * skipped stretch is found by word times, which DTW can get wrong: on a chunk of two sentences said three times it put
 * a whole sentence's words at one instant, so the sentence's own stretch looked skipped and came back twice.
 */
export function isRecoveredSpeech(segment: RecognizedSegment, chunkSegments: RecognizedSegment[]): boolean {
  const normalized = (text: string): string =>
    text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim();
  const text = normalized(segment.text);
  return (
    segment.words.length > 0 &&
    segment.averageLogProbability > -1 &&
    segment.noSpeechProbability < 0.6 &&
    text !== '' &&
    !normalized(chunkSegments.map((s) => s.text).join(' ')).includes(text)
  );
}

/** A chunk accepted only at this temperature or above (after fallback) is unreliable text. */
const unreliableTemperature = 0.5;
/** Below this, whisper's language detection is a guess worth telling the caller about. */
const unsureLanguageProbability = 0.5;

/**
 * The text a chunk passes on as the next chunk's prompt. A decoding accepted only at a high temperature (after
 * fallback) is unreliable, and conditioning on it invites repetition loops: the prompt is reset instead, as in
 * faster-whisper (prompt_reset_on_temperature 0.5).
 * Nor is text that says a sentence twice passed on (issue 35): the speech repeats itself, and Whisper conditioned on
 * those sentences passes over the audio's next sayings of them. A clip said 12 times (0.5 s apart) came back 8 times,
 * each prompted chunk of four sayings as two, and the skipped ones could not be recovered as speech without words
 * (their text is already in the chunk).
 */
export function conditioningText(result: ChunkTranscript): string {
  const text = result.segments.map((s) => s.text).join('');
  return result.temperature < unreliableTemperature && !saysASentenceTwice(text) ? text : '';
}

/** Sentences of at least this many words count for saysASentenceTwice: "Hello?" twice is a greeting, not a repeat. */
const repeatedSentenceMinWords = 3;

/** Text in which one sentence (of repeatedSentenceMinWords or more, case and punctuation aside) occurs twice. */
export function saysASentenceTwice(text: string): boolean {
  const seen = new Set<string>();
  for (const sentence of text.split(/[.?!。？！]+/u)) {
    const words = sentence
      .toLowerCase()
      .split(/[^\p{L}\p{N}']+/u)
      .filter(Boolean);
    if (words.length < repeatedSentenceMinWords) continue;
    const key = words.join(' ');
    if (seen.has(key)) return true;
    seen.add(key);
  }
  return false;
}

export interface TranscriptFacts {
  /** Temperature of each speech chunk's accepted decoding (empty when there was no speech). */
  acceptedTemperatures: number[];
  requestedTemperature: number;
  requestedLanguage: string;
  language: string;
  languageProbability: number;
  /** Only when diarization ran. */
  speakersFound?: number;
  speakersRequested?: { numSpeakers?: number; minSpeakers?: number };
  /** Key terms that did not fit in the prompt's budget (the most left out of any chunk's prompt). */
  keytermsOmittedFromPrompt?: number;
}

/** What the caller should know about a transcript that its other fields do not say (the response's `warnings`). */
export function transcriptWarnings(facts: TranscriptFacts): string[] {
  const warnings: string[] = [];
  const speechChunks = facts.acceptedTemperatures.length;
  if (speechChunks === 0) warnings.push('No speech was detected: the transcript is empty.');
  if (facts.requestedLanguage === 'auto' && speechChunks > 0 && facts.languageProbability < unsureLanguageProbability) {
    warnings.push(
      `The language was detected with low confidence ('${facts.language}', probability ${facts.languageProbability.toFixed(2)}): pass ` +
        `language if it is known.`,
    );
  }
  // A high temperature the caller asked for is not a fallback.
  const unreliableChunks = facts.acceptedTemperatures.filter((t) => t >= unreliableTemperature && t > facts.requestedTemperature).length;
  if (unreliableChunks > 0) {
    warnings.push(
      `${unreliableChunks} of ${speechChunks} speech chunks were decoded only after temperature fallback to ${unreliableTemperature} or ` +
        `more: their text may be unreliable (verbose_json shows temperature and avg_logprob per segment).`,
    );
  }
  const wanted = facts.speakersRequested?.numSpeakers ?? facts.speakersRequested?.minSpeakers;
  if (facts.speakersFound !== undefined && wanted !== undefined && facts.speakersFound < wanted && speechChunks > 0) {
    warnings.push(
      `${wanted} speakers were asked for, but only ${facts.speakersFound} had speech turns of their own (short turns join a neighbour).`,
    );
  }
  if (facts.keytermsOmittedFromPrompt) {
    warnings.push(
      `${facts.keytermsOmittedFromPrompt} key terms (the last given) did not fit in Whisper's prompt: they are still snapped to and ` +
        `reported, but do not bias the decoding.`,
    );
  }
  return warnings;
}

/** The speaker whose turns overlap [start, end) most; nearest turn when none overlaps. */
export function speakerAt(turns: SpeakerTurn[], startSeconds: number, endSeconds: number): string | null {
  if (turns.length === 0) return null;
  const overlap = new Map<string, number>();
  for (const turn of turns) {
    const o = Math.min(endSeconds, turn.endSeconds) - Math.max(startSeconds, turn.startSeconds);
    if (o > 0) overlap.set(turn.speaker, (overlap.get(turn.speaker) ?? 0) + o);
  }
  if (overlap.size > 0) return [...overlap.entries()].sort((a, b) => b[1] - a[1])[0]![0];
  const middle = (startSeconds + endSeconds) / 2;
  const distance = (t: SpeakerTurn): number => Math.max(t.startSeconds - middle, middle - t.endSeconds, 0);
  return turns.reduce((best, t) => (distance(t) < distance(best) ? t : best)).speaker;
}

/** Where a recognised word is in the original audio: it ends with its speech piece, and lasts at most maxWordSeconds. */
function originalWordSpan(chunk: SpeechChunk, word: RecognizedWord): SpeechSegment {
  const startSeconds = toOriginalSeconds(chunk, word.startSeconds);
  const endSeconds = Math.max(
    startSeconds,
    Math.min(toOriginalSeconds(chunk, word.endSeconds), pieceEndSeconds(chunk, word.startSeconds), startSeconds + maxWordSeconds),
  );
  return { startSeconds, endSeconds };
}

/**
 * Words keep the recogniser's segments, which are split wherever the speaker changes (each word has one speaker). Where
 * the diarization has a segment's speaker talking over the neighbouring segment of another speaker, the segment
 * reaches into that time (never past the neighbour): segments then overlap, and are sorted by start.
 */
export function buildSegments(recognized: RecognizedChunk[], turns: SpeakerTurn[]): TranscriptSegment[] {
  const result: TranscriptSegment[] = [];
  for (const { chunk, segments, temperature, language } of recognized) {
    for (const segment of segments) {
      const words: TranscriptWord[] = segment.words.map((w) => {
        const { startSeconds: start, endSeconds: end } = originalWordSpan(chunk, w);
        return { word: w.text, start, end, confidence: w.probability, speaker: speakerAt(turns, start, end), language };
      });
      const start = toOriginalSeconds(chunk, segment.startSeconds);
      const end = toOriginalSeconds(chunk, segment.endSeconds);
      const groups: TranscriptWord[][] = [];
      for (const word of words) {
        const last = groups.at(-1);
        if (last && last[0]!.speaker === word.speaker) last.push(word);
        else groups.push([word]);
      }
      if (groups.length === 0) {
        if (segment.text.trim() === '') continue;
        groups.push([]);
      }
      for (const group of groups) {
        const text =
          groups.length === 1
            ? segment.text.trim()
            : group
                .map((w) => w.word)
                .join('')
                .trim();
        const confidence =
          group.length > 0 ? group.reduce((sum, w) => sum + w.confidence, 0) / group.length : Math.exp(segment.averageLogProbability);
        result.push({
          id: 0,
          start: group[0]?.start ?? start,
          end: group.at(-1)?.end ?? end,
          text,
          speaker: group[0]?.speaker ?? speakerAt(turns, start, end),
          language,
          confidence,
          words: group,
          avg_logprob: segment.averageLogProbability,
          no_speech_prob: segment.noSpeechProbability,
          temperature,
        });
      }
    }
  }
  return spanOverlaps(result, turns)
    .sort((a, b) => a.start - b.start || a.end - b.end)
    .map((segment, id) => ({ ...segment, id }));
}

function spanOverlaps(segments: TranscriptSegment[], turns: SpeakerTurn[]): TranscriptSegment[] {
  const turnAt = (speaker: string | null, at: number): SpeakerTurn | undefined =>
    turns.find((t) => t.speaker === speaker && t.startSeconds <= at && at <= t.endSeconds);
  return segments.map((segment, i) => {
    const previous = segments[i - 1];
    const next = segments[i + 1];
    let { start, end } = segment;
    // Back to the start of the speaker's turn when it began while the previous speaker's turn was still going...
    const first = turnAt(segment.speaker, segment.start);
    const previousTurn = previous && previous.speaker !== segment.speaker ? turnAt(previous.speaker, previous.end) : undefined;
    if (first && previousTurn && first.startSeconds < previousTurn.endSeconds)
      start = Math.min(start, Math.max(first.startSeconds, previous!.start));
    // ...and on to the end of its turn when the next speaker's turn began before it.
    const last = turnAt(segment.speaker, segment.end);
    const nextTurn = next && next.speaker !== segment.speaker ? turnAt(next.speaker, next.start) : undefined;
    if (last && nextTurn && last.endSeconds > nextTurn.startSeconds) end = Math.max(end, Math.min(last.endSeconds, next!.end));
    return { ...segment, start, end };
  });
}

/** Per speaker: seconds of speech, and how much of it another speaker talks over. */
export function summarizeSpeakers(
  turns: SpeakerTurn[],
): Array<{ id: string; total_speech_seconds: number; total_overlap_seconds: number }> {
  const totals = new Map<string, { speech: number; overlap: number }>();
  for (const t of turns) {
    const total = totals.get(t.speaker) ?? { speech: 0, overlap: 0 };
    total.speech += t.endSeconds - t.startSeconds;
    // Other speakers' turns covering this one, merged so three people at once are not counted twice.
    const covered = turns
      .filter((o) => o.speaker !== t.speaker && o.startSeconds < t.endSeconds && o.endSeconds > t.startSeconds)
      .map((o) => [Math.max(o.startSeconds, t.startSeconds), Math.min(o.endSeconds, t.endSeconds)] as const)
      .sort((a, b) => a[0] - b[0]);
    let reached = t.startSeconds;
    for (const [from, to] of covered) {
      total.overlap += Math.max(0, to - Math.max(from, reached));
      reached = Math.max(reached, to);
    }
    totals.set(t.speaker, total);
  }
  const hundredths = (seconds: number): number => Math.round(seconds * 100) / 100;
  return [...totals.entries()]
    .sort((a, b) => a[0].localeCompare(b[0], 'en', { numeric: true }))
    .map(([id, total]) => ({ id, total_speech_seconds: hundredths(total.speech), total_overlap_seconds: hundredths(total.overlap) }));
}

/**
 * Each stretch of speech with Whisper's language probabilities on its audio (padded as chunks are, never into the
 * neighbouring stretches), from one more streaming pass over the file, which also feeds the diarizer. Stretches shorter
 * than minDetectedStretchSeconds are not detected on, unless none is longer (then the longest is).
 */
async function detectStretchLanguages(
  blocks: AsyncIterable<Float32Array>,
  speech: SpeechSegment[],
  detectLanguage: (samples: Float32Array, signal?: AbortSignal) => Promise<Record<string, number>>,
  diarizer: Diarizer | undefined,
  signal: AbortSignal | undefined,
): Promise<LanguageStretch[]> {
  const longest = speech.reduce((best, s) => (s.endSeconds - s.startSeconds > best.endSeconds - best.startSeconds ? s : best));
  const ranges = speech.map((s, i) => ({
    stretch: s,
    detect: s === longest || s.endSeconds - s.startSeconds >= minDetectedStretchSeconds,
    startSeconds: Math.max(s.startSeconds - speechPadBeforeSeconds, speech[i - 1]?.endSeconds ?? 0),
    endSeconds: Math.min(s.endSeconds + speechPadAfterSeconds, speech[i + 1]?.startSeconds ?? Number.POSITIVE_INFINITY),
  }));
  const stretches: LanguageStretch[] = speech.map((s) => ({ startSeconds: s.startSeconds, endSeconds: s.endSeconds, speaker: null }));
  const window = new SampleWindow();
  let next = 0;
  const detectReady = async (final: boolean): Promise<void> => {
    for (; next < ranges.length; next++) {
      const range = ranges[next]!;
      if (!range.detect) continue;
      if (!final && window.availableUntil < Math.ceil(range.endSeconds * asrSampleRate)) return;
      const samples = window.take(Math.floor(range.startSeconds * asrSampleRate), Math.ceil(range.endSeconds * asrSampleRate));
      if (samples.length > 0) stretches[next]!.probabilities = await detectLanguage(samples, signal);
      window.discardBefore(Math.floor((ranges[next + 1]?.startSeconds ?? range.endSeconds) * asrSampleRate));
    }
  };
  for await (const block of blocks) {
    window.push(block);
    await diarizer?.addAudio(block, signal);
    await detectReady(false);
  }
  await detectReady(true);
  return stretches;
}

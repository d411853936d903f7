/**
 * whisper.cpp through voxd's own Node-API addon (native/whisper-addon). The model stays loaded; each call runs on the
 * libuv thread pool with its own decoding state. Words come from the model's tokens with DTW (cross-attention)
 * timestamps; a word's probability is the geometric mean of its tokens' probabilities.
 */
import { deflateSync } from 'node:zlib';
import { whisperLanguages } from '../languages.js';
import type {
  AlignChunkOptions,
  AlignedChunk,
  ChunkTranscript,
  RecognizedSegment,
  RecognizedWord,
  TranscribeChunkOptions,
  Transcriber,
} from '../transcriber.js';
import { WhisperModel, type WhisperResult, type WhisperToken } from './whisper-native.js';
import { OnnxWhisperEncoder } from './whisper-onnx-encoder.js';

/** Scripts written without spaces between words: each token (or character) is its own word, as Whisper does. */
const unspacedLanguages = new Set(['zh', 'ja', 'th', 'lo', 'my', 'yue']);

/**
 * whisper.cpp's fallback test: a decoding whose last 32 tokens have less entropy than this is a loop, decoded again at
 * the next temperature. whisper.cpp's 2.4 also fails a short sentence the audio says three times or more in one window
 * (a recorded prompt repeated): such chunks went on to temperature 1, whose samples dropped most of the sayings and put
 * the rest at wrong times (issue 35: "The horizon seems extremely distant." said 28 times after a telephone call came back
 * 16 times, WER 30.0% against faster-whisper's 13.2%; at 2.0 4.9%, and a third of the CPU). 2.0 and 1.6 tied on the tuning
 * files of bench/long-files.ts; the higher was taken. Loops of a word or a short phrase stay far below it, and sampled
 * loops are caught by the compression test (loops) as well.
 */
const fallbackEntropyThreshold = 2.0;

/**
 * Decoding settings that match faster-whisper's defaults (beam 5, temperature fallback, thresholds), except the fallback
 * entropy threshold (above) and the no-speech gate (a chunk whose no-speech probability passes 0.6 while its text is improbable is taken for silence), which is off:
 * unpatched whisper.cpp never computed that probability (it was 1 / n_vocab), so every measurement of this pipeline ran
 * without the gate, and the VAD already keeps silence out. The probability itself is real now (native/build-whisper.sh)
 * and reported per segment; turning the gate on is left to a measurement.
 */
const decoding = {
  beamSize: 5,
  bestOf: 5,
  temperatureIncrement: 0.2,
  entropyThreshold: fallbackEntropyThreshold,
  logprobThreshold: -1,
  noSpeechThreshold: 1.01,
};

/**
 * Tokens a decoding pass may produce: 40 plus 15 per second of audio, far above what speech needs (fast Chinese is about
 * 8 characters a second), whisper.cpp's own limit of 220 from 12 s up. A sample stuck in a loop otherwise runs to 220
 * tokens: the temperature fallback on a 1 s clip (its beam-search decoding is improbable) cost 6-8 s of CPU, nearly all
 * of it 5 samples decoding a loop that whisper.cpp's entropy test then drops; 2 s with the cap. The entropy test only
 * looks at decodings over 32 tokens, hence the 40 (with 16 the looping samples were kept). Legitimate text longer than
 * the cap is not lost: whisper.cpp ends the pass at a timestamp and decodes the rest in the next.
 */
export function maxTokens(audioSeconds: number): number {
  return 40 + Math.ceil(15 * audioSeconds);
}

/**
 * A draft decodes audio cut in the middle of speech, where greedy decoding is prone to repeat a phrase to the token limit
 * ("Mr. Quilter. Mr. Quilter. ..." for the first second of a sentence): drafts get a cap near the fastest speech
 * instead (English runs at about 4 tokens a second).
 */
export function draftMaxTokens(audioSeconds: number): number {
  return 8 + Math.ceil(8 * audioSeconds);
}

/**
 * Text that says a phrase of 2-6 words twice in a row ("Mr. Quilter. Mr. Quilter."): the start of a loop in a short
 * draft, too short for the compression test to see.
 */
export function repeatsPhrase(text: string): boolean {
  const words = text
    .toLowerCase()
    .split(/\s+/)
    .map((w) => w.replace(/[^\p{L}\p{N}]/gu, ''))
    .filter(Boolean);
  for (let length = 2; length <= 6; length++) {
    for (let i = 0; i + 2 * length <= words.length; i++) {
      if (words.slice(i, i + length).join(' ') === words.slice(i + length, i + 2 * length).join(' ')) return true;
    }
  }
  return false;
}

/** Whisper's encoder frames per second of audio. */
const encoderFramesPerSecond = 50;
/**
 * Short chunks are encoded with a context cut to the audio plus this many frames of padding instead of the full 30 s
 * window: about 4x cheaper for a 5 s utterance. The padding lets the model see the audio end; without enough of it,
 * Whisper tends to repeat itself (measured on ../shared/eval/asr: 32 frames broke 4 of 19 utterances, 64 none).
 * The full window is not more accurate on those 19: de, fr, en, ja and zh lost words, ru, ko and one en clip gained
 * (word and character errors over all 19: 40 -> 45), at twice the CPU time.
 * What is past the audio is the log-mel of silence, as in OpenAI's Whisper; faster-whisper pads its features with 0
 * instead, which alone makes the two read LDC93S1 differently with the same weights (checked both ways). Zero features
 * were worse with the cut context (the arctic clip came back as "It It") and no better with the full window (40 errors
 * over the 19 either way, at 2.5x the CPU time).
 */
const contextPaddingFrames = 64;
/**
 * Longer chunks get the full window. Lowering this to 16 s was measured and reverted: the 16-20 s chunks of the 60-minute
 * bench file cost 0.76 s of CPU per audio second against 0.32 for other lengths, and three of them replayed with the full
 * window needed no fallback (20.8 s of CPU instead of 34.5), yet the whole files were not faster (10 min: RTF 0.172 vs
 * 0.145; 60 min: 0.191 vs 0.189): each chunk's text is the next one's prompt, so one changed chunk changes the rest.
 */
const reducedContextMaxSeconds = 20;
// A multiple of 16 frames: the cross-attention products then run as llamafile's tiled kernels instead of one dot product
// per output (67 s side-by-side file: 11.8 s of CPU instead of 13.3 s).
const reducedContext = (audioSeconds: number): number =>
  Math.ceil((Math.ceil(audioSeconds * encoderFramesPerSecond) + contextPaddingFrames) / 16) * 16;

/**
 * The first segment after another whose text Whisper put at one point in time (its start and end timestamps equal): it has
 * stopped following the audio there. Realtime bench streams replayed with no silence before the speech: a Chinese turn
 * went on from such a segment to say its sentence again ("...学习历史" [0, 2 s], "...学" [2, 2 s], "歷史" [2, 2.5 s]). None
 * of 130 segments the file path wrote for the 97 eval and generated files was such a one.
 */
function firstCollapsed(segments: WhisperResult['segments']): number {
  return segments.findIndex((segment, i) => i > 0 && segment.text.trim().length > 0 && segment.endSeconds <= segment.startSeconds);
}

/** A segment that starts this close to the end of the audio has no speech left to say: it is made up. */
const runOnMarginSeconds = 0.2;
/**
 * Low-latency decodings (live turns, which end 0.4 s after the speech) end at their first timestamp this close to the end
 * of the audio instead of whisper.cpp's 0.1 s: what would follow is a run-on, which such a caller drops anyway
 * (withoutRunOn). Realtime bench: a Japanese turn said its sentence five times over in zero-length segments 0.2-0.24 s
 * before the end, 0.84 s of decoding instead of 0.41.
 */
const lowLatencyEndOfAudioMarginSeconds = 0.3;

/**
 * A reduced-context decoding that repeated itself or started a segment where the audio has ended: the sign that the
 * model did not see where the audio ends. Such chunks are decoded again with the full window. (A last segment's end
 * time may fall inside the padding: that alone is normal.)
 */
export function looksRunOn(result: WhisperResult, audioSeconds: number): boolean {
  const texts = result.segments.map((segment) => segment.text.trim().toLowerCase()).filter((text) => text.length > 0);
  if (new Set(texts).size < texts.length) return true;
  if (firstCollapsed(result.segments) !== -1) return true;
  return result.segments.some((segment) => segment.text.trim().length > 0 && segment.startSeconds >= audioSeconds - runOnMarginSeconds);
}

/**
 * A run-on decoding without what it made up: segments that repeat an earlier one, a segment with no duration and all after
 * it, and segments that start past the speech.
 */
export function withoutRunOn(result: WhisperResult, audioSeconds: number): WhisperResult {
  const seen = new Set<string>();
  const collapsedAt = firstCollapsed(result.segments);
  const segments = (collapsedAt === -1 ? result.segments : result.segments.slice(0, collapsedAt)).filter((segment) => {
    const text = segment.text.trim().toLowerCase();
    if (text.length === 0) return true;
    if (seen.has(text) || segment.startSeconds >= audioSeconds - runOnMarginSeconds) return false;
    seen.add(text);
    return true;
  });
  return { ...result, segments };
}

/**
 * OpenAI Whisper's test for a repetition loop: decoded text that zlib compresses more than 2.4 times. whisper.cpp's own
 * fallback test (token entropy over the last 32 tokens) misses a whole sentence said over and over (one 25.8 s chunk of
 * the 60-minute bench file came back as one sentence 9 times, ratio 7.3, and as the next chunk's prompt made whisper copy
 * it).
 *
 * The test cannot tell a loop from speech that really repeats itself (an announcement, a chorus, a speaker saying the
 * same sentences again: two short sentences said three times compress 3.3 times). As a fallback rule it sent every such
 * chunk through all six temperatures (3-5x the CPU) and rewarded deletions: a retry was accepted as soon as it compressed
 * less, which a decoding that drops repeats does (one prompted retry kept 2 of a chunk's 5 sentences and passed), and when
 * none did, the last one, sampled at temperature 1, was kept and flagged unreliable. What does loop on such speech is a
 * decoding conditioned on the previous chunk's text, which holds the same sentences: Whisper copies the prompt over the
 * window (a 26 s chunk that says two sentences 3 times came back with them over and over, compression 8.4). So a
 * prompted decoding that fails the test is decoded again without the prompt from the same temperature, and the test
 * does not apply at temperature 0 without a prompt (see loops).
 */
export const compressionRatioThreshold = 2.4;

/** whisper.cpp, like OpenAI Whisper and faster-whisper, does not condition a decoding at this temperature or above on the prompt. */
const promptTemperatureCutoff = 0.5;

/**
 * A decoding that compresses like a loop and could have made the repetition up: one conditioned on a prompt, or one
 * sampled above temperature 0. Beam search at temperature 0 without a prompt follows the audio: what it repeats, the
 * audio says (see compressionRatioThreshold).
 */
export function loops(result: WhisperResult, prompted: boolean): boolean {
  return compressionRatio(result.segments.map((s) => s.text).join('')) > compressionRatioThreshold && (prompted || result.temperature > 0);
}

export function compressionRatio(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length === 0 ? 0 : bytes.length / deflateSync(bytes).length;
}

/** DTW time, or whisper's coarse one for a window too short to align (whisper.cpp leaves t_dtw at -1 there). */
function tokenStartSeconds(token: WhisperToken): number {
  return token.dtwSeconds >= 0 ? token.dtwSeconds : token.startSeconds;
}

/** Groups tokens into words: a new word starts at a leading space (or at every character for unspaced scripts). */
export function tokensToWords(tokens: WhisperToken[], segmentEndSeconds: number, language: string): RecognizedWord[] {
  const groups: WhisperToken[][] = [];
  const perCharacter = unspacedLanguages.has(language);
  let pending: WhisperToken[] = [];
  const flush = (): void => {
    if (pending.length > 0) groups.push(pending);
    pending = [];
  };
  for (const token of tokens) {
    const startsWord = token.bytes[0] === 0x20;
    if (!perCharacter && startsWord) flush();
    pending.push(token);
    // In unspaced scripts a word ends as soon as the bytes so far form whole characters.
    if (
      perCharacter &&
      !Buffer.concat(pending.map((t) => t.bytes))
        .toString('utf8')
        .includes('\uFFFD')
    )
      flush();
  }
  flush();
  const words: RecognizedWord[] = [];
  for (const [i, group] of groups.entries()) {
    const text = Buffer.concat(group.map((t) => t.bytes)).toString('utf8');
    if (text.trim() === '') continue;
    const startSeconds = tokenStartSeconds(group[0]!);
    const nextGroup = groups[i + 1];
    const next = nextGroup ? tokenStartSeconds(nextGroup[0]!) : segmentEndSeconds;
    const logProbability = group.reduce((sum, t) => sum + t.logProbability, 0) / group.length;
    words.push({
      text,
      startSeconds,
      endSeconds: Math.max(startSeconds, Math.min(next, segmentEndSeconds)),
      probability: Math.min(1, Math.max(0, Math.exp(logProbability))),
    });
  }
  // DTW times are monotone in practice; enforce it so callers can rely on it.
  for (let i = 1; i < words.length; i++) {
    const previous = words[i - 1]!;
    const word = words[i]!;
    if (word.startSeconds < previous.startSeconds) word.startSeconds = previous.startSeconds;
    if (word.endSeconds < word.startSeconds) word.endSeconds = word.startSeconds;
    if (previous.endSeconds > word.startSeconds) previous.endSeconds = word.startSeconds;
  }
  return words;
}

export class WhisperCppTranscriber implements Transcriber {
  readonly engine = 'whisper.cpp';
  readonly languages = whisperLanguages;

  /** What encodes the audio: whisper.cpp's own graphs, or the model's ONNX encoder on onnxruntime. */
  readonly encoder: 'whisper.cpp' | 'onnxruntime';

  private constructor(
    private readonly model: WhisperModel,
    readonly modelId: string,
    private readonly threads: number,
    private readonly onnxEncoder: OnnxWhisperEncoder | undefined,
  ) {
    this.encoder = onnxEncoder ? 'onnxruntime' : 'whisper.cpp';
  }

  /** `encoderPath`: the model's encoder as ONNX (catalog onnxEncoders), which then encodes every window in whisper.cpp's place. */
  static async load(
    modelPath: string,
    options: { modelId: string; threads: number; modelName?: string; encoderPath?: string },
  ): Promise<WhisperCppTranscriber> {
    const onnxEncoder = options.encoderPath ? await OnnxWhisperEncoder.load(options.encoderPath, { threads: options.threads }) : undefined;
    const model = await WhisperModel.load(modelPath, {
      ...(options.modelName ? { modelName: options.modelName } : {}),
      ...(onnxEncoder ? { encoder: onnxEncoder.encode } : {}),
    });
    return new WhisperCppTranscriber(model, options.modelId, options.threads, onnxEncoder);
  }

  async close(): Promise<void> {
    await this.onnxEncoder?.close();
  }

  async align(samples: Float32Array, options: AlignChunkOptions): Promise<AlignedChunk> {
    const audioSeconds = samples.length / 16000;
    const result = await this.model.transcribe(
      samples,
      {
        language: options.language,
        forcedText: options.text,
        threads: this.threads,
        audioContext: audioSeconds <= reducedContextMaxSeconds ? reducedContext(audioSeconds) : 0,
        noContext: true,
      },
      options.signal,
    );
    const tokens = result.segments.flatMap((segment) => segment.tokens);
    const times = tokens.map(tokenStartSeconds);
    // Without timestamp tokens, DTW gives each token the time of the position that follows it (the attention that
    // predicts the next token): a whole word late against faster-whisper (Spanish eval clip: median 0.36 s). A token's
    // sound starts at its predecessor's time; the first one's is extrapolated back by the next gap.
    return {
      language: result.language,
      tokens: tokens.map((token, i) => ({
        bytes: token.bytes,
        startSeconds: i > 0 ? times[i - 1]! : Math.max(0, 2 * times[0]! - (times[1] ?? times[0]!)),
        logProbability: token.logProbability,
      })),
    };
  }

  /** On the context transcribe's first decoding would detect with, so a chunk detected alone gets the language it would. */
  async detectLanguage(samples: Float32Array, signal?: AbortSignal): Promise<Record<string, number>> {
    const audioSeconds = samples.length / 16000;
    const result = await this.model.transcribe(
      samples,
      {
        language: 'auto',
        detectOnly: true,
        threads: this.threads,
        audioContext: audioSeconds <= reducedContextMaxSeconds ? reducedContext(audioSeconds) : 0,
      },
      signal,
    );
    return result.languageProbabilities ?? { [result.language]: result.languageProbability };
  }

  async transcribe(samples: Float32Array, options: TranscribeChunkOptions): Promise<ChunkTranscript> {
    const decode = (audioContext: number, temperature: number, prompt: string | undefined, fallback: boolean): Promise<WhisperResult> =>
      this.model.transcribe(
        samples,
        {
          ...decoding,
          ...(fallback ? {} : { temperatureIncrement: 0 }),
          ...(options.draft ? { beamSize: 1, bestOf: 1, temperatureIncrement: 0 } : {}),
          language: options.language,
          ...(options.translate ? { translate: true } : {}),
          ...(prompt ? { prompt } : {}),
          threads: this.threads,
          temperature,
          maxTokens: options.draft ? draftMaxTokens(samples.length / 16000) : maxTokens(samples.length / 16000),
          // Conditioning text comes from the caller's prompt.
          noContext: true,
          suppressNonSpeech: true,
          audioContext,
          ...(options.lowLatency ? { endOfAudioMarginMs: lowLatencyEndOfAudioMarginSeconds * 1000 } : {}),
        },
        options.signal,
      );
    const audioSeconds = samples.length / 16000;
    const decodeAt = async (temperature: number, prompt: string | undefined, fallback = true): Promise<WhisperResult> => {
      if (audioSeconds <= reducedContextMaxSeconds) {
        const reduced = await decode(reducedContext(audioSeconds), temperature, prompt, fallback);
        if (!looksRunOn(reduced, audioSeconds)) return reduced;
        // The full window costs 2-3 s on a short turn (realtime bench: 2 of 3 turns of a continuous session).
        if (options.lowLatency) return withoutRunOn(reduced, audioSeconds);
      }
      // 0: the model's full 30 s window.
      return decode(0, temperature, prompt, fallback);
    };
    if (options.draft) {
      const draft = await decode(
        audioSeconds <= reducedContextMaxSeconds ? reducedContext(audioSeconds) : 0,
        options.temperature,
        options.prompt,
        false,
      );
      // A looping draft says nothing about the speech: none is better.
      return chunkTranscript(
        loops(draft, true) || looksRunOn(draft, audioSeconds) || repeatsPhrase(draft.segments.map((s) => s.text).join(''))
          ? { ...draft, segments: [] }
          : draft,
      );
    }
    let result = await decodeAt(options.temperature, options.prompt);
    if (options.prompt && result.temperature < promptTemperatureCutoff && loops(result, true)) {
      // Copied from the prompt: decoded again on the audio alone, without whisper.cpp's fallback, whose entropy test takes
      // sentences the audio repeats for a loop too (it sent such a chunk on to temperature 1).
      result = await decodeAt(options.temperature, undefined, false);
    }
    // A loop sampled above temperature 0: the next temperature.
    while (loops(result, false) && result.temperature < 1 - 1e-6) {
      result = await decodeAt(Math.min(1, result.temperature + decoding.temperatureIncrement), undefined);
    }
    return chunkTranscript(result);
  }
}

/** How far outside its segment's timestamps a word's DTW time may fall before the segment's DTW times are not believed. */
const dtwSegmentToleranceSeconds = 1;

/**
 * A segment's words with times spread over the segment's own timestamps (by characters) where DTW put a word well
 * outside them. On speech that repeats itself the cross-attention does not tell the sayings apart (issue 35): a clip said
 * four times in a chunk came back as four segments at 0, 4.5, 9 and 13.4 s, right, but with their words at 9.2, 13.7, 17
 * and 17 s, so the first two sayings looked like speech without words and the last two shared one instant. Words of
 * which most start at the instant of the word before are spread the same way.
 */
export function wordsWithinSegment(words: RecognizedWord[], startSeconds: number, endSeconds: number): RecognizedWord[] {
  const outside = words.some(
    (w) => w.startSeconds < startSeconds - dtwSegmentToleranceSeconds || w.startSeconds > endSeconds + dtwSegmentToleranceSeconds,
  );
  const stacked = words.filter((w, i) => i > 0 && w.startSeconds === words[i - 1]!.startSeconds).length > words.length / 2;
  if (!(outside || stacked) || words.length === 0 || endSeconds <= startSeconds) return words;
  const characters = words.reduce((n, w) => n + w.text.length, 0);
  let at = 0;
  return words.map((w) => {
    const from = startSeconds + ((endSeconds - startSeconds) * at) / characters;
    at += w.text.length;
    return { ...w, startSeconds: from, endSeconds: startSeconds + ((endSeconds - startSeconds) * at) / characters };
  });
}

function chunkTranscript(result: WhisperResult): ChunkTranscript {
  const segments: RecognizedSegment[] = result.segments.map((segment) => ({
    startSeconds: segment.startSeconds,
    endSeconds: segment.endSeconds,
    text: segment.text,
    words: wordsWithinSegment(tokensToWords(segment.tokens, segment.endSeconds, result.language), segment.startSeconds, segment.endSeconds),
    averageLogProbability: segment.averageLogProbability,
    noSpeechProbability: segment.noSpeechProbability,
  }));
  return { language: result.language, languageProbability: result.languageProbability, segments, temperature: result.temperature };
}

/**
 * whisper.cpp through voxd's own Node-API addon (native/whisper-addon). The model stays loaded; each call runs on the
 * libuv thread pool with its own decoding state. Words come from the model's tokens with DTW (cross-attention)
 * timestamps; a word's probability is the geometric mean of its tokens' probabilities.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { VoxError } from '../../../errors.js';
import { packageRoot } from '../../../version.js';
import { whisperLanguages } from '../languages.js';
import type { ChunkTranscript, RecognizedSegment, RecognizedWord, TranscribeChunkOptions, Transcriber } from '../transcriber.js';

interface NativeToken {
  id: number;
  bytes: Buffer;
  probability: number;
  logProbability: number;
  startSeconds: number;
  endSeconds: number;
  dtwSeconds: number;
}

interface NativeSegment {
  startSeconds: number;
  endSeconds: number;
  text: string;
  noSpeechProbability: number;
  tokens: NativeToken[];
}

interface NativeResult {
  language: string;
  languageProbability: number;
  segments: NativeSegment[];
}

interface NativeOptions {
  language: string;
  prompt?: string;
  threads: number;
  temperature: number;
  temperatureIncrement: number;
  beamSize: number;
  bestOf: number;
  entropyThreshold: number;
  logprobThreshold: number;
  noSpeechThreshold: number;
  suppressNonSpeech: boolean;
}

interface WhisperAddon {
  load(modelPath: string, options: { dtwPreset: number }): Promise<object>;
  transcribe(model: object, samples: Float32Array, options: NativeOptions, abortFlag: Int32Array): Promise<NativeResult>;
  info(model: object): { multilingual: boolean; type: string; vocabularySize: number; textLayers: number };
}

export const addonPath = path.join(packageRoot, 'native/build/voxd_whisper.node');

/** whisper.cpp's alignment-head presets (enum whisper_alignment_heads_preset) by model name. */
const dtwPresets: Record<string, number> = {
  'tiny.en': 3, tiny: 4, 'base.en': 5, base: 6, 'small.en': 7, small: 8, 'medium.en': 9, medium: 10,
  'large-v1': 11, 'large-v2': 12, 'large-v3': 13, 'large-v3-turbo': 14,
};

/** 'ggml-base.bin' -> 'base', 'ggml-large-v3-turbo-q5_0.bin' -> 'large-v3-turbo'. */
export function modelNameFromFile(file: string): string | undefined {
  const stem = path.basename(file).replace(/^ggml-/, '').replace(/\.bin$/, '').replace(/-q\d_\d$|-q\d_k$/, '');
  return stem in dtwPresets ? stem : undefined;
}

/** Scripts written without spaces between words: each token (or character) is its own word, as Whisper does. */
const unspacedLanguages = new Set(['zh', 'ja', 'th', 'lo', 'my', 'yue']);

/** Decoding settings that match faster-whisper's defaults (beam 5, temperature fallback, thresholds). */
const decoding = { beamSize: 5, bestOf: 5, temperatureIncrement: 0.2, entropyThreshold: 2.4, logprobThreshold: -1, noSpeechThreshold: 0.6 };

function loadAddon(): WhisperAddon {
  try {
    return createRequire(import.meta.url)(addonPath) as WhisperAddon;
  } catch (error) {
    throw new VoxError('model_unavailable', 'The whisper.cpp addon is not built: run scripts/setup.sh (native/build-whisper.sh).', { cause: error });
  }
}

/** Groups tokens into words: a new word starts at a leading space (or at every character for unspaced scripts). */
export function tokensToWords(tokens: NativeToken[], segmentEndSeconds: number, language: string): RecognizedWord[] {
  const groups: NativeToken[][] = [];
  const perCharacter = unspacedLanguages.has(language);
  let pending: NativeToken[] = [];
  const flush = (): void => {
    if (pending.length > 0) groups.push(pending);
    pending = [];
  };
  for (const token of tokens) {
    const startsWord = token.bytes[0] === 0x20;
    if (!perCharacter && startsWord) flush();
    pending.push(token);
    // In unspaced scripts a word ends as soon as the bytes so far form whole characters.
    if (perCharacter && !Buffer.concat(pending.map((t) => t.bytes)).toString('utf8').includes('\uFFFD')) flush();
  }
  flush();
  const words: RecognizedWord[] = [];
  for (const [i, group] of groups.entries()) {
    const text = Buffer.concat(group.map((t) => t.bytes)).toString('utf8');
    if (text.trim() === '') continue;
    const startSeconds = group[0]!.dtwSeconds;
    const next = groups[i + 1]?.[0]?.dtwSeconds ?? segmentEndSeconds;
    const logProbability = group.reduce((sum, t) => sum + t.logProbability, 0) / group.length;
    words.push({ text, startSeconds, endSeconds: Math.max(startSeconds, Math.min(next, segmentEndSeconds)), probability: Math.min(1, Math.max(0, Math.exp(logProbability))) });
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

  private constructor(
    private readonly addon: WhisperAddon,
    private readonly model: object,
    readonly modelId: string,
    private readonly threads: number,
  ) {}

  static async load(modelPath: string, options: { modelId: string; threads: number; modelName?: string }): Promise<WhisperCppTranscriber> {
    const addon = loadAddon();
    const name = options.modelName ?? modelNameFromFile(modelPath);
    const model = await addon.load(modelPath, { dtwPreset: name ? dtwPresets[name]! : 0 });
    return new WhisperCppTranscriber(addon, model, options.modelId, options.threads);
  }

  async transcribe(samples: Float32Array, options: TranscribeChunkOptions): Promise<ChunkTranscript> {
    options.signal?.throwIfAborted();
    const abortFlag = new Int32Array(1);
    const onAbort = (): void => {
      abortFlag[0] = 1;
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let result: NativeResult;
    try {
      result = await this.addon.transcribe(this.model, samples, {
        ...decoding,
        language: options.language,
        ...(options.prompt ? { prompt: options.prompt } : {}),
        threads: this.threads,
        temperature: options.temperature,
        suppressNonSpeech: true,
      }, abortFlag);
    } catch (error) {
      if (abortFlag[0]) throw new VoxError('aborted', 'The request was cancelled.', { cause: error });
      throw new VoxError('internal', 'Transcription failed.', { cause: error });
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
    const segments: RecognizedSegment[] = result.segments.map((segment) => {
      const logProbabilities = segment.tokens.map((t) => t.logProbability);
      return {
        startSeconds: segment.startSeconds,
        endSeconds: segment.endSeconds,
        text: segment.text,
        words: tokensToWords(segment.tokens, segment.endSeconds, result.language),
        averageLogProbability: logProbabilities.length > 0 ? logProbabilities.reduce((a, b) => a + b, 0) / logProbabilities.length : 0,
        noSpeechProbability: segment.noSpeechProbability,
      };
    });
    return { language: result.language, languageProbability: result.languageProbability, segments, temperature: options.temperature };
  }
}

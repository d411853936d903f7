/**
 * Typed binding of voxd's whisper.cpp addon (native/whisper-addon, built by native/build-whisper.sh).
 *
 * A model is loaded once (flash attention off in the decoder, whose attention weights DTW reads, and on in the encoder by
 * a patch: see native/build-whisper.sh; DTW token timestamps on with the model's alignment-head preset) and kept until it
 * is garbage-collected. Each transcribe() runs on the libuv thread pool with its own whisper_state, so calls on
 * one model or on several models may overlap and the event loop stays free; each call needs the state's memory (about
 * 50 MB for base) on top of the shared weights. An AbortSignal stops a running call through whisper.cpp's abort callback,
 * which whisper.cpp polls after each graph computation: after the current encoder pass (about a second per 30 s window
 * on 2 cores) or decoder step.
 *
 * A model may be given an encoder of its own (an ONNX graph on onnxruntime, see whisper-onnx-encoder.ts): whisper.cpp
 * then hands it every window's log-mel instead of running its own conv and encoder graphs
 * (native/whisper-encoder-input.patch), and waits for its output; the decoder and DTW are whisper.cpp's as before.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { VoxError } from '../../../core/errors.js';
import { packageRoot } from '../../../core/version.js';

export interface WhisperToken {
  id: number;
  /** The token's raw bytes: a token may hold part of a multi-byte character, so decode whole words, not tokens. */
  bytes: Buffer;
  /** Probability of the token under the model (0..1). */
  probability: number;
  logProbability: number;
  /** whisper.cpp's timestamp-token times (coarse). */
  startSeconds: number;
  endSeconds: number;
  /** Cross-attention (DTW) time of the token: where its sound starts. */
  dtwSeconds: number;
}

export interface WhisperSegment {
  startSeconds: number;
  endSeconds: number;
  text: string;
  noSpeechProbability: number;
  /** Mean log-probability of the segment's text tokens. */
  averageLogProbability: number;
  /** Text tokens only (special and timestamp tokens are left out). */
  tokens: WhisperToken[];
}

export interface WhisperResult {
  /** The language given, or the one detected when 'auto' was asked. */
  language: string;
  /** The detector's probability of that language (1 when the language was given). */
  languageProbability: number;
  /** Every language's probability, by whisper.cpp's language code, when it was detected. */
  languageProbabilities?: Record<string, number>;
  /** Temperature of the accepted decoding: the first one, or higher after a fallback (the highest over 30 s windows). */
  temperature: number;
  segments: WhisperSegment[];
}

export interface WhisperDecodeOptions {
  /** ISO 639-1 code or 'auto' (detected on the first 30 s). */
  language: string;
  /** Translate to English instead of transcribing. */
  translate?: boolean;
  /** Initial prompt: vocabulary hints or the previous text. */
  prompt?: string;
  threads?: number;
  /** First temperature; on a failed decoding (entropy or log-probability threshold) it rises by temperatureIncrement up to 1. */
  temperature?: number;
  /** 0 disables the fallback. */
  temperatureIncrement?: number;
  entropyThreshold?: number;
  logprobThreshold?: number;
  noSpeechThreshold?: number;
  /** Beam search when above 1, greedy otherwise. */
  beamSize?: number;
  /** Candidates sampled at temperatures above 0. */
  bestOf?: number;
  /** Do not condition a 30 s window on the text of the previous one. */
  noContext?: boolean;
  suppressBlank?: boolean;
  /** Suppress non-speech tokens (symbols, music notes, speaker labels). */
  suppressNonSpeech?: boolean;
  singleSegment?: boolean;
  /**
   * Encoder frames to use (50 per second, at most 1500 = 30 s; 0 = all). Fewer frames make short audio cheaper to
   * encode; the audio must fit in them.
   */
  audioContext?: number;
  /**
   * Tokens one decoding pass may produce before whisper.cpp forces a timestamp and ends it (0 = its own limit, 220); the
   * audio after that timestamp is decoded in the next pass.
   */
  maxTokens?: number;
  /**
   * A decoding pass ends at its first timestamp this close to the end of the audio (0 = whisper.cpp's 100 ms): nothing
   * said after it can be heard, and a model that has not seen where the audio ends repeats itself there.
   */
  endOfAudioMarginMs?: number;
  /**
   * Forced alignment: the decoder says exactly this text (greedy, one pass, no timestamps, at most about 200 tokens), and
   * each token reports the model's probability of it before forcing; DTW times the tokens as in a transcription.
   */
  forcedText?: string;
  /** With language 'auto': only detect it (languageProbabilities), without decoding. */
  detectOnly?: boolean;
}

export interface WhisperModelInfo {
  multilingual: boolean;
  /** 'tiny', 'base', 'small', ... */
  type: string;
  vocabularySize: number;
  textLayers: number;
}

/**
 * An encoder outside whisper.cpp, called on the JS thread for each window with its log-mel, [1, mel bins, frames]
 * (frames = 2 x the encoder context). It must call done once, with the encoder output [1, frames / 2, state] or with
 * null and why it failed (which fails the transcription), and must not throw.
 */
export type WhisperEncoder = (mel: Float32Array, frames: number, done: (embedding: Float32Array | null, error?: string) => void) => void;

interface NativeAddon {
  load(modelPath: string, options: { dtwPreset: number }): Promise<object>;
  transcribe(
    model: object,
    samples: Float32Array,
    options: WhisperDecodeOptions,
    abortFlag: Int32Array,
    encoder?: WhisperEncoder,
  ): Promise<WhisperResult>;
  info(model: object): WhisperModelInfo;
  encode(model: object, samples: Float32Array, options: { threads: number }): Promise<WhisperEncoding>;
  /** Ends every wait for an encoder: the calls fail. */
  closing(): void;
}

/** whisper.cpp's own encoding of a full window: the log-mel it read, [1, mel bins, frames], and its output, [1, frames / 2, state]. */
export interface WhisperEncoding {
  mel: Float32Array;
  frames: number;
  embedding: Float32Array;
}

export const whisperAddonPath = path.join(packageRoot, 'native/build/voxd_whisper.node');

/** whisper.cpp's alignment-head presets (enum whisper_alignment_heads_preset) by model name. */
const dtwPresets: Record<string, number> = {
  'tiny.en': 3,
  tiny: 4,
  'base.en': 5,
  base: 6,
  'small.en': 7,
  small: 8,
  'medium.en': 9,
  medium: 10,
  'large-v1': 11,
  'large-v2': 12,
  'large-v3': 13,
  'large-v3-turbo': 14,
};

/** 'ggml-base.bin' -> 'base', 'ggml-large-v3-turbo-q5_0.bin' -> 'large-v3-turbo'. */
export function modelNameFromFile(file: string): string | undefined {
  const stem = path
    .basename(file)
    .replace(/^ggml-/, '')
    .replace(/\.bin$/, '')
    .replace(/-q\d_\d$|-q\d_k$/, '');
  return stem in dtwPresets ? stem : undefined;
}

let addon: NativeAddon | undefined;
function loadAddon(): NativeAddon {
  // ggml's OpenMP threads meet at a barrier after every graph node, a few hundred times per decoding step. libgomp's
  // default spins 300,000 times there before sleeping: with any other work on the cores (a second request, the VAD,
  // speech synthesis) a spinning thread burned the time slice its partner needed, and the first 20 s chunk of a process
  // took 11-72 s instead of 7 s beside one busy process. Sleeping at once (PASSIVE) paid a futex wake-up per barrier
  // instead: on the 67 s side-by-side file 13 s of CPU and 8.8 s of wall time, against 11.6 s and 6.9 s with a short
  // spin of 3,000 first. Beside one busy process the short spin cost 7% more wall time than sleeping (12.0 s against
  // 11.2 s), and two transcriptions at once 13% more (12.5 s against 11.0 s). Decoding on one thread when another
  // decoding runs would avoid that, but a transcript would then depend on the load: ggml's products do not give the same
  // floats on one thread as on two.
  // The spin is now 300 (issue 35): on a machine busy with other work (load 13-14 on 2 cores) the 3,000 spins of each
  // barrier wait were 40% of a 1 s clip's CPU time (perf: libgomp's pause loop), and the CLI on that clip cost 3.4-4.3
  // CPU-s against 2.6-2.9 with 300 or PASSIVE; a 73 s file of the English eval clips 22.3 CPU-s and 44 s of wall time
  // against 17.2 and 32 (PASSIVE 16.9 and 33), with the same transcript. Not yet measured on an idle machine.
  // An OMP_WAIT_POLICY already set is kept, with its own spin count. libgomp reads both once, when the addon loads.
  if (process.env.OMP_WAIT_POLICY === undefined) {
    process.env.OMP_WAIT_POLICY = 'ACTIVE';
    process.env.GOMP_SPINCOUNT ??= '300';
  }
  try {
    if (!addon) {
      addon = createRequire(import.meta.url)(whisperAddonPath) as NativeAddon;
      // process.exit() waits for the libuv threads: one waiting for an encoder that will never answer (its event loop is
      // gone) would hang the exit.
      const loaded = addon;
      process.once('exit', () => loaded.closing());
    }
    return addon;
  } catch (error) {
    throw new VoxError('model_unavailable', 'The whisper.cpp addon is not built: run native/build-whisper.sh.', { cause: error });
  }
}

export class WhisperModel {
  private constructor(
    private readonly native: NativeAddon,
    private readonly handle: object,
    private readonly encoder: WhisperEncoder | undefined,
  ) {}

  /**
   * Loads a ggml model. `modelName` picks the DTW alignment heads (default: guessed from the file name); without a
   * known name, DTW is off and tokens' dtwSeconds are -0.01. `encoder` replaces whisper.cpp's own for every call.
   */
  static async load(modelPath: string, options: { modelName?: string; encoder?: WhisperEncoder } = {}): Promise<WhisperModel> {
    const native = loadAddon();
    const name = options.modelName ?? modelNameFromFile(modelPath);
    try {
      return new WhisperModel(native, await native.load(modelPath, { dtwPreset: name ? (dtwPresets[name] ?? 0) : 0 }), options.encoder);
    } catch (error) {
      throw new VoxError('model_unavailable', `whisper.cpp could not load ${modelPath}.`, { cause: error });
    }
  }

  info(): WhisperModelInfo {
    return this.native.info(this.handle);
  }

  /** whisper.cpp's own encoder on the first 30 s of the samples (whatever encoder the model was given): what another encoder must match. */
  encodeWithWhisperCpp(samples: Float32Array, options: { threads: number }): Promise<WhisperEncoding> {
    return this.native.encode(this.handle, samples, options);
  }

  /** Transcribes 16 kHz mono samples in -1..1. Rejects with VoxError 'aborted' when the signal fires. */
  async transcribe(samples: Float32Array, options: WhisperDecodeOptions, signal?: AbortSignal): Promise<WhisperResult> {
    signal?.throwIfAborted();
    // Shared with the worker thread, which polls it between graph computations.
    const abortFlag = new Int32Array(1);
    const onAbort = (): void => {
      abortFlag[0] = 1;
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.native.transcribe(this.handle, samples, options, abortFlag, this.encoder);
    } catch (error) {
      if (abortFlag[0]) throw new VoxError('aborted', 'The request was cancelled.', { cause: error });
      if (error instanceof Error && error.message.startsWith('forced text too long'))
        throw new VoxError('invalid_request', `'text' is longer than one window of speech can say: ${error.message}.`, {
          param: 'text',
          cause: error,
        });
      throw new VoxError('internal', 'Transcription failed.', { cause: error });
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

/** The capability every speech synthesis engine implements; the service picks an engine per language and voice. */
import type { Waveform } from '../../audio/waveform.js';
import type { Emotion } from './emotion.js';
import type { TimedWord } from './text/word-times.js';

export interface BuiltinVoice {
  /** Stable id, unique across engines (`af_heart`, `espeak-de`). */
  id: string;
  name: string;
  /** The engine that speaks it (its Synthesizer's `engine`). */
  engine: string;
  /** Languages the voice was made for (lower-case codes as accepted by `synthesize`). */
  languages: string[];
  gender: 'female' | 'male' | 'unknown';
}

/** A voice an engine would speak once its catalog model is installed (`voxd models pull <model>`). */
export interface PullableVoice {
  /** The catalog model to pull. */
  model: string;
  /** The language it speaks (a lower-case code as accepted by `synthesize`). */
  language: string;
}

/**
 * Which voice speaks: a built-in voice, a weighted blend of built-in voices (Kokoro), or a style vector fitted elsewhere
 * (Kokoro: Float32Array of 256 values, e.g. for a cloned voice).
 */
export type VoiceSelection = { id: string } | { blend: Array<{ id: string; weight: number }> } | { style: Float32Array };

/** A stretch of a request: text to read, or (with `ipa`) the written word(s) said as these IPA phonemes. */
export interface SpeechPart {
  text: string;
  ipa?: string;
}

export interface SynthesisRequest {
  text: string;
  /**
   * `text` as parts where some are said as given IPA phonemes (SSML `<phoneme>`, a dictionary's phoneme rule) instead of
   * read: one run, so the phonemes are said within their sentence. A part's `text` is what it stands for (the written word,
   * for word timestamps); `text` is the parts' texts joined.
   */
  parts?: readonly SpeechPart[];
  language: string;
  voice: VoiceSelection;
  emotion?: Emotion;
  /** Speaking-rate multiplier (0.25-4), applied on top of the emotion's rate. */
  speed?: number;
  /** Pitch shift from the voice's own (SSML `<prosody pitch>`), on top of the emotion's; engines that shiftsPitch. */
  pitchSemitones?: number;
  /**
   * Nobody waits on this speech piece by piece (a built-in voice's analysis): an engine may favour throughput over the
   * latency of one run (Kokoro runs it on one-thread sessions side by side).
   */
  background?: boolean;
  /** The caller reads the chunks' `words`: an engine whose word times cost extra work (espeak-ng) makes them only then. */
  wordTimes?: boolean;
  signal?: AbortSignal;
}

export interface SynthesizedChunk {
  /** Mono audio at the engine's `sampleRate`. */
  waveform: Waveform;
  /** The (normalised) text this chunk speaks. */
  text: string;
  /**
   * Its spoken words (of `text`, normalised) with seconds from the chunk's start: from the predicted durations (Kokoro,
   * Piper), or (espeak-ng, when `wordTimes` was asked) its words spoken alone warped onto the chunk.
   */
  words?: TimedWord[];
  /** SSML `<mark>` names at this chunk's start (a chunk without samples, from the service). */
  marks?: string[];
}

export interface Synthesizer {
  /** Short name, in voices' `engine` and the x-voxd-engine header (`kokoro`). */
  readonly engine: string;
  readonly modelId: string;
  readonly sampleRate: number;
  /** What its voices are, for voice listings ('Kokoro-82M neural voice'). */
  readonly description: string;
  /**
   * Natural (neural) speech rather than rules: capabilities list its languages as `neural_languages`; its voices' speaker
   * embeddings are prepared with the models, and a cloned voice speaks in (a blend of) those closest to it.
   */
  readonly neural: boolean;
  /** Its voices can be blended (`{ blend }`): a cloned voice then speaks with the blend of the voices closest to it. */
  readonly blends: boolean;
  /** It honours `pitchSemitones`. */
  readonly shiftsPitch: boolean;
  languages(): string[];
  /** The tag it speaks a requested language as (`en` -> `en-us`), or undefined when it does not speak it. */
  speaks(language: string): string | undefined;
  /** The voice that speaks `language` (a tag from speaks()): `voiceId`, one of its own, where it can, else its choice. */
  voiceFor(language: string, voiceId?: string): string;
  voices(): BuiltinVoice[];
  /** Voices of its catalog that are not installed, best first: what capabilities offer to pull (absent: none). */
  pullable?(): PullableVoice[];
  /** Picks up voices installed since it loaded (a `voxd models pull` while the server runs); cheap when none were. */
  refresh?(): Promise<void>;
  /** Audio chunk by chunk (sentences; a long first sentence is split at a clause so audio starts early). */
  synthesize(request: SynthesisRequest): AsyncIterable<SynthesizedChunk>;
  close(): Promise<void>;
}

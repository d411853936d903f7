/** The ASR engine interface: one call per chunk of 16 kHz mono speech (at most 30 s). */

export interface RecognizedWord {
  /** As spoken, with leading space where the language separates words by spaces. */
  text: string;
  startSeconds: number;
  endSeconds: number;
  /** Geometric mean of the probabilities of the word's tokens (see README: confidence). */
  probability: number;
}

export interface RecognizedSegment {
  startSeconds: number;
  endSeconds: number;
  text: string;
  words: RecognizedWord[];
  /** Mean log-probability of the segment's tokens. */
  averageLogProbability: number;
  noSpeechProbability: number;
}

export interface ChunkTranscript {
  language: string;
  languageProbability: number;
  segments: RecognizedSegment[];
  /** Temperature that produced the accepted decoding (fallback raises it). */
  temperature: number;
}

export interface TranscribeChunkOptions {
  /** ISO 639-1 code, or 'auto' to detect. */
  language: string;
  /** Conditioning text: the user's prompt and/or the previous chunk's text. */
  prompt?: string;
  /** Whisper's translate task: English text from speech in `language` (or the detected one). */
  translate?: boolean;
  temperature: number;
  /**
   * A cheap provisional decoding (live partials, replaced by a full one): greedy, at `temperature` only, without the
   * re-decodes a full decoding may run.
   */
  draft?: boolean;
  /**
   * Latency counts (live finals): a decoding that runs on past the speech is trimmed of what it made up instead of being
   * decoded again with the model's whole window.
   */
  lowLatency?: boolean;
  signal?: AbortSignal;
}

export interface AlignChunkOptions {
  /** The text the audio is said to say (whitespace normalised). */
  text: string;
  /** ISO 639-1 code, or 'auto' to detect. */
  language: string;
  signal?: AbortSignal;
}

/** One token of forced text: where its sound starts and how probable the model found it there. */
export interface AlignedToken {
  bytes: Buffer;
  startSeconds: number;
  logProbability: number;
}

export interface AlignedChunk {
  language: string;
  /** The text's tokens in order, every one of them. */
  tokens: AlignedToken[];
}

export interface Transcriber {
  engine: string;
  modelId: string;
  languages: readonly string[];
  transcribe(samples: Float32Array, options: TranscribeChunkOptions): Promise<ChunkTranscript>;
  /**
   * Every language's probability (ISO 639-1 code -> 0..1) for one stretch of speech (at most 30 s), as transcribe detects
   * it with language 'auto'; engines without it leave it out.
   */
  detectLanguage?(samples: Float32Array, signal?: AbortSignal): Promise<Record<string, number>>;
  /** Forced alignment of a given text on one window of speech (at most 30 s); engines without it leave it out. */
  align?(samples: Float32Array, options: AlignChunkOptions): Promise<AlignedChunk>;
  /** Releases what the engine holds besides memory (worker threads). */
  close?(): Promise<void>;
}

/** A speech-enhancement model used as the dialogue extractor: mono in at its own rate, same-length speech estimate out. */
export interface DialogueModel {
  readonly id: string;
  /** The rate the model runs at. */
  readonly sampleRate: number;
  /** Sample-aligned speech estimate (no delay), same length as the input. */
  enhance(samples: Float32Array, signal?: AbortSignal): Promise<Float32Array>;
  close(): Promise<void>;
}

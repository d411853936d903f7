/**
 * Speaker labels for utterances that arrive one by one (live transcription): each utterance joins the most similar known
 * speaker, or starts a new one when none is similar enough. Labels never change once given, so a live client can show them.
 * The embedding is CAM++'s (src/speakers/campplus.ts).
 */
import type { Waveform } from '../audio/waveform.js';
import { camppSampleRate } from './campplus.js';
import { cosineSimilarity, normalise } from './embedding.js';

/** What labels need of a speaker embedding: one vector per 16 kHz mono utterance. */
export interface UtteranceEncoder {
  embedUtterance(waveform: Waveform, signal?: AbortSignal): Promise<Float32Array>;
}

/**
 * Same-speaker threshold of live labels, for CAM++ embeddings. bench/speaker-embeddings.ts (live) streams the eval
 * diarization files and generated conversations through a session: DER of the labelled turns 0.329 with CAM++ against
 * 0.375 with GE2E (confusion 0.195 against 0.241), each file at the threshold best on the others (CAM++ 0.475-0.55);
 * this is the one best on all files.
 */
export const liveSameSpeakerSimilarity = 0.55;

interface KnownSpeaker {
  label: string;
  /** Sum of the speaker's utterance embeddings (its direction is the centroid). */
  sum: Float32Array;
}

export class OnlineSpeakers {
  private readonly speakers: KnownSpeaker[] = [];
  /** Labels are given in utterance order even when embeddings finish out of order. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly encoder: () => Promise<UtteranceEncoder>,
    /** Cosine similarity to a speaker's centroid from which an utterance is that speaker's. */
    private readonly sameSpeakerSimilarity: number,
  ) {}

  /** The speaker of one utterance (16 kHz mono): SPEAKER_1, SPEAKER_2... in order of first appearance. */
  label(samples: Float32Array, signal?: AbortSignal): Promise<string> {
    const embedding = this.encoder().then((encoder) =>
      encoder.embedUtterance({ samples, sampleRate: camppSampleRate, channels: 1 }, signal),
    );
    const labelled = this.queue.then(async () => this.assign(await embedding));
    this.queue = labelled.catch(() => undefined);
    return labelled;
  }

  private assign(embedding: Float32Array): string {
    let best: { speaker: KnownSpeaker; similarity: number } | undefined;
    for (const speaker of this.speakers) {
      const similarity = cosineSimilarity(normalise(speaker.sum), embedding);
      if (!best || similarity > best.similarity) best = { speaker, similarity };
    }
    if (best && best.similarity >= this.sameSpeakerSimilarity) {
      // Unit vectors, so every utterance weighs the same in the centroid (CAM++ embeddings are not normalised).
      const unit = normalise(embedding);
      for (let i = 0; i < unit.length; i++) best.speaker.sum[i]! += unit[i]!;
      return best.speaker.label;
    }
    const speaker = { label: `SPEAKER_${this.speakers.length + 1}`, sum: normalise(embedding) };
    this.speakers.push(speaker);
    return speaker.label;
  }
}

/**
 * Speaker labels for utterances that arrive one by one (live transcription): each utterance joins the most similar known
 * speaker, or starts a new one when none is similar enough. Labels never change once given, so a live client can show them.
 */
import { cosineSimilarity, embeddingSampleRate, normalise, sameSpeakerSimilarity, type SpeakerEncoder } from './embedding.js';


interface KnownSpeaker {
  label: string;
  /** Sum of the speaker's utterance embeddings (its direction is the centroid). */
  sum: Float32Array;
}

export class OnlineSpeakers {
  private readonly speakers: KnownSpeaker[] = [];
  /** Labels are given in utterance order even when embeddings finish out of order. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly encoder: () => Promise<SpeakerEncoder>) {}

  /** The speaker of one utterance (16 kHz mono): SPEAKER_1, SPEAKER_2... in order of first appearance. */
  label(samples: Float32Array, signal?: AbortSignal): Promise<string> {
    const embedding = this.encoder().then((encoder) => encoder.embedUtterance({ samples, sampleRate: embeddingSampleRate, channels: 1 }, signal));
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
    if (best && best.similarity >= sameSpeakerSimilarity) {
      for (let i = 0; i < embedding.length; i++) best.speaker.sum[i]! += embedding[i]!;
      return best.speaker.label;
    }
    const speaker = { label: `SPEAKER_${this.speakers.length + 1}`, sum: Float32Array.from(embedding) };
    this.speakers.push(speaker);
    return speaker.label;
  }
}

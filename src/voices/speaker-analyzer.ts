/**
 * The speaker-embedding analysis of a new voice profile: one GE2E embedding for the profile (mean of the clips'),
 * and the checks that the clips hold one speaker (within each clip, and across clips).
 */
import { VoxError } from '../errors.js';
import { diarize } from '../speakers/diarization.js';
import { averageEmbedding, cosineSimilarity, sameSpeakerSimilarity, type SpeakerEncoder } from '../speakers/embedding.js';
import type { VoiceAnalyzer } from './service.js';

/** A second voice must hold this share of a clip's windows to count (not a cough or a short interjection). */
const secondSpeakerShare = 0.15;

export function speakerAnalyzer(encoder: () => Promise<SpeakerEncoder>): VoiceAnalyzer {
  return {
    name: 'speaker',
    async analyse(clips, signal) {
      const model = await encoder();
      const embeddings: Float32Array[] = [];
      for (const [index, clip] of clips.entries()) {
        // The same diarization as transcription uses: a second speaker must hold a real share of the clip.
        const seconds = clip.samples.length / clip.sampleRate;
        const { turns } = await diarize(model, clip, [{ startSeconds: 0, endSeconds: seconds }], { maxSpeakers: 2 }, signal);
        const perSpeaker = [0, 1].map((speaker) => turns.filter((t) => t.speaker === speaker).reduce((sum, t) => sum + t.endSeconds - t.startSeconds, 0));
        if (Math.min(...perSpeaker) >= secondSpeakerShare * seconds) {
          throw new VoxError('unsupported_value', `Clip ${index + 1} seems to hold more than one speaker: send clips of the target speaker alone.`, { param: 'files' });
        }
        embeddings.push(await model.embedUtterance(clip, signal));
      }
      const profile = averageEmbedding(embeddings);
      // Each clip against the others (leave one out: with two clips, each is half of the plain mean).
      for (const [index, embedding] of embeddings.entries()) {
        const others = embeddings.filter((_, i) => i !== index);
        if (others.length > 0 && cosineSimilarity(embedding, averageEmbedding(others)) < sameSpeakerSimilarity) {
          throw new VoxError('unsupported_value', `Clip ${index + 1} does not sound like the same speaker as the other clips.`, { param: 'files' });
        }
      }
      return { analysis: { embedding: Array.from(profile, (v) => Math.round(v * 1e6) / 1e6), model: 'resemblyzer-ge2e' } };
    },
  };
}

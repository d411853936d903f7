/**
 * The speaker-embedding analysis of a new voice profile: the profile's GE2E embedding (blend search, gender estimate,
 * conversion metrics) and its CAM++ embedding (naming diarized speakers), each the mean of the clips', and the checks that
 * the clips hold one speaker (within each clip, and across clips).
 *
 * Within a clip, the transcription diarizer (segmentation-3.0 + CAM++) looks for two speakers: on the eval clips
 * (bench/speaker-embeddings.ts, clips) it rejected 1 of 30 single-speaker clips and found 78 of 81 two-speaker ones,
 * where GE2E windows with agglomerative clustering rejected 3 and found 79.
 * Across clips, CAM++ decides, with the threshold that names speakers: on halves of the eval/vc clips
 * (bench/speaker-identification.ts) same-speaker pairs score 0.57 and up and different speakers at most 0.36 (d' 6.8),
 * where GE2E leaves a gap of 0.04 (0.72 against 0.69, d' 5.1).
 */
import { VoxError } from '../core/errors.js';
import type { CamppEncoder } from '../speakers/campplus.js';
import { averageEmbedding, cosineSimilarity, type SpeakerEncoder } from '../speakers/embedding.js';
import type { OverlapDiarizer } from '../speakers/overlap-diarization.js';
import { speakerMatchSimilarity } from '../speakers/identification.js';
import { storedEmbedding, type VoiceAnalyzer } from './service.js';

/** A second voice must hold this share of a clip to count (not a cough or a short interjection). */
const secondSpeakerShare = 0.15;

export function speakerAnalyzer(
  encoder: () => Promise<SpeakerEncoder>,
  campplus: () => Promise<CamppEncoder>,
  diarizer: () => Promise<OverlapDiarizer>,
): VoiceAnalyzer {
  return {
    name: 'speaker',
    async analyse(clips, signal) {
      const [model, camppModel] = await Promise.all([encoder(), campplus()]);
      const embeddings: Float32Array[] = [];
      const camppEmbeddings: Float32Array[] = [];
      for (const [index, clip] of clips.entries()) {
        // A short-clip diarization: a second speaker must hold a real share of the clip.
        const seconds = clip.samples.length / clip.sampleRate;
        const clipDiarizer = await diarizer();
        await clipDiarizer.addAudio(clip.samples, signal);
        const turns = await clipDiarizer.finish({ maxSpeakers: 2 }, signal);
        const perSpeaker = [...new Set(turns.map((t) => t.speaker))].map((speaker) =>
          turns.filter((t) => t.speaker === speaker).reduce((sum, t) => sum + t.endSeconds - t.startSeconds, 0),
        );
        if (perSpeaker.length === 2 && Math.min(...perSpeaker) >= secondSpeakerShare * seconds) {
          throw new VoxError(
            'unsupported_value',
            `Clip ${index + 1} seems to hold more than one speaker: send clips of the target speaker alone.`,
            { param: 'files' },
          );
        }
        embeddings.push(await model.embedUtterance(clip, signal));
        camppEmbeddings.push(await camppModel.embedUtterance(clip, signal));
      }
      // Each clip against the others (leave one out: with two clips, each is half of the plain mean).
      for (const [index, embedding] of camppEmbeddings.entries()) {
        const others = camppEmbeddings.filter((_, i) => i !== index);
        if (others.length > 0 && cosineSimilarity(embedding, averageEmbedding(others)) < speakerMatchSimilarity) {
          throw new VoxError('unsupported_value', `Clip ${index + 1} does not sound like the same speaker as the other clips.`, {
            param: 'files',
          });
        }
      }
      return {
        analysis: {
          embedding: storedEmbedding(averageEmbedding(embeddings)),
          model: 'resemblyzer-ge2e',
          campplus_embedding: storedEmbedding(averageEmbedding(camppEmbeddings)),
        },
      };
    },
  };
}

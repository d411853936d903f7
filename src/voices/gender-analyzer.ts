/**
 * A rough gender estimate of a voice profile, used to narrow the built-in voices a cloned voice is matched against.
 * Two cues: the speaker embedding (is the profile closer to the mean embedding of the built-in female voices or of the
 * male ones: Kokoro's English voices, whose gender is known, prepared with the models) and the median F0 (YIN; 165 Hz separates typical
 * adult speaking pitch). The embedding decides when it is clear; otherwise pitch does. Pitch alone misleads (a male
 * orator's speech sat at a median of 255 Hz; his embedding was 0.115 closer to the male voices), and so does a weak
 * embedding difference (a female VCTK reader at 225 Hz was 0.02 closer to the male voices). The embedding is GE2E's:
 * bench/speaker-embeddings.ts (voices) scores the 11 eval speakers of known gender and the 54 Kokoro voices, each against
 * the prepared (English) Kokoro voices other than itself, with the margin chosen on the other 64 (leave one out): GE2E
 * 10/11 and 53/54 (margins 0.02-0.025; the missed eval speaker, a VCTK reader at 225 Hz and -0.053, is right at this
 * 0.06, where pitch decides), CAM++ 10/11 and 47/54; the CAM++ embedding alone gets 6 of the 11 eval speakers (GE2E
 * 10): its distances from human speech to Kokoro's do not follow gender.
 */
import { pitchStatistics, trackPitch } from '../audio/pitch.js';
import { averageEmbedding, cosineSimilarity } from '../speakers/embedding.js';
import type { VoiceAnalyzer } from './service.js';

const boundaryHz = 165;
/** From this difference of the two cosines on, the embedding overrules pitch. */
const clearEmbeddingDifference = 0.06;

export type GenderReferences = () => Promise<Array<{ gender: 'female' | 'male'; embedding: Float32Array }>>;

export function genderAnalyzer(references: GenderReferences): VoiceAnalyzer {
  return {
    name: 'gender',
    async analyse(clips, _signal, previous) {
      const f0 = clips.flatMap((clip) => Array.from(trackPitch(clip.samples, clip.sampleRate)));
      const { medianHz } = pitchStatistics(Float32Array.from(f0));
      const byPitch = medianHz > 0 ? (medianHz < boundaryHz ? 'male' : 'female') : null;
      const embedding = (previous.speaker as { embedding?: number[] } | undefined)?.embedding;
      const known = embedding ? await references() : [];
      const female = known.filter((r) => r.gender === 'female').map((r) => r.embedding);
      const male = known.filter((r) => r.gender === 'male').map((r) => r.embedding);
      if (!embedding || female.length === 0 || male.length === 0)
        return { analysis: { estimate: byPitch, median_f0_hz: Math.round(medianHz) } };
      const profile = Float32Array.from(embedding);
      const difference = cosineSimilarity(profile, averageEmbedding(female)) - cosineSimilarity(profile, averageEmbedding(male));
      const estimate = Math.abs(difference) >= clearEmbeddingDifference || !byPitch ? (difference > 0 ? 'female' : 'male') : byPitch;
      return {
        analysis: { estimate, median_f0_hz: Math.round(medianHz), female_minus_male_similarity: Math.round(difference * 1000) / 1000 },
      };
    },
  };
}

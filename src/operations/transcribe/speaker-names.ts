/**
 * The speaker-naming step of a diarized transcript (speaker_voice_ids): diarized speakers matched to the listed voice
 * profiles (speakers/identification.ts; phone-band speech against the profiles through the same line), and the names written into speakers[], segments and words. Unmatched speakers
 * keep their SPEAKER_n label with null names.
 */
import type { CamppEncoder } from '../../speakers/campplus.js';
import {
  channelOf,
  embedSpeakers,
  matchSimilarityOf,
  matchSpeakers,
  type SpeechChannel,
  speechOfSpeakers,
  speechToEmbed,
} from '../../speakers/identification.js';
import type { VoiceRecord } from '../../core/records.js';
import type { Transcript } from './formats.js';
import type { SpeakerTurn } from './pipeline.js';

export interface SpeakerNaming {
  encoder: CamppEncoder;
  /** The listed profiles with their CAM++ embedding for speech of a channel (made through it when narrowband). */
  profiles: Array<{ record: VoiceRecord; embedding: (channel: SpeechChannel) => Promise<Float32Array> }>;
  /** The recording (decoded once more, only up to the last span embedded). */
  path: string;
  turns: SpeakerTurn[];
  maxAudioSeconds: number;
  signal?: AbortSignal;
}

export async function nameSpeakers(transcript: Transcript, naming: SpeakerNaming): Promise<Transcript> {
  const speech = await speechOfSpeakers(naming.path, speechToEmbed(naming.turns), {
    maxAudioSeconds: naming.maxAudioSeconds,
    ...(naming.signal ? { signal: naming.signal } : {}),
  });
  const embeddings = await embedSpeakers(naming.encoder, speech, naming.signal);
  // Telephone speech is compared with profiles through the same line, at that line's threshold (issue 35).
  const channel = channelOf(speech);
  const profiles = [];
  for (const p of naming.profiles) profiles.push({ voiceId: p.record.id, embedding: await p.embedding(channel) });
  const matches = matchSpeakers(embeddings, profiles, matchSimilarityOf[channel]);
  const names = new Map(naming.profiles.map((p) => [p.record.id, p.record.name]));
  const named = (speaker: string | null) => {
    const voiceId = speaker === null ? undefined : matches.get(speaker)?.voiceId;
    return { speaker_name: voiceId === undefined ? null : names.get(voiceId)!, voice_id: voiceId ?? null };
  };
  return {
    ...transcript,
    segments: transcript.segments.map((s) => ({ ...s, ...named(s.speaker), words: s.words.map((w) => ({ ...w, ...named(w.speaker) })) })),
    speakers: transcript.speakers.map((s) => {
      const similarity = matches.get(s.id)?.similarity;
      return { ...s, ...named(s.id), voice_similarity: similarity === undefined ? null : Math.round(similarity * 1000) / 1000 };
    }),
  };
}

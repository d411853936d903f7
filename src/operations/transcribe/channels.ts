/**
 * multichannel=true: each channel of a recording (a call with each party on its own channel) transcribed on its own by
 * the pipeline, as one speaker, and the channels' segments merged in time order. Exact where diarization guesses, and
 * cheaper: no speaker embeddings.
 */
import type { Transcript, TranscriptSegment } from './formats.js';
import { findKeyterms } from './keyterms.js';
import { summarizeSpeakers, transcribeFile, type PipelineDependencies, type PipelineRequest, type SpeakerTurn } from './pipeline.js';

export const channelSpeaker = (channel: number): string => `SPEAKER_${channel}`;

export interface ChannelTranscript {
  transcript: Transcript;
  /** Each channel's speech (its segments' spans), as turns of its speaker: overlaps are cross-talk. */
  turns: SpeakerTurn[];
  channelOf: Map<string, number>;
}

export async function transcribeChannels(
  deps: PipelineDependencies,
  request: Omit<PipelineRequest, 'diarizer' | 'channel'>,
  channels: number,
): Promise<ChannelTranscript> {
  const transcripts: Transcript[] = [];
  for (let channel = 0; channel < channels; channel++) {
    const onProgress = request.onProgress;
    transcripts.push(
      await transcribeFile(deps, {
        ...request,
        channel,
        ...(onProgress ? { onProgress: (p) => onProgress({ stage: p.stage, fraction: (channel + p.fraction) / channels }) } : {}),
      }),
    );
  }
  const segments: TranscriptSegment[] = transcripts
    .flatMap((t, channel) =>
      t.segments.map((s) => ({
        ...s,
        channel,
        speaker: channelSpeaker(channel),
        words: s.words.map((w) => ({ ...w, speaker: channelSpeaker(channel) })),
      })),
    )
    .sort((a, b) => a.start - b.start || a.end - b.end)
    .map((s, id) => ({ ...s, id }));
  const turns = segments.map((s) => ({ speaker: s.speaker!, startSeconds: s.start, endSeconds: s.end }));
  const summaries = new Map(summarizeSpeakers(turns).map((s) => [s.id, s]));
  // The language of the channel with the most speech (each channel detects its own when none is given).
  const speechSeconds = (t: Transcript): number => t.segments.reduce((sum, s) => sum + s.end - s.start, 0);
  const main = transcripts.reduce((best, t) => (speechSeconds(t) > speechSeconds(best) ? t : best));
  const keyterms = request.keyterms ?? [];
  return {
    transcript: {
      text: segments
        .map((s) => s.text)
        .join(' ')
        .replace(/\s+/g, ' ')
        .trim(),
      language: main.language,
      language_probability: main.language_probability,
      duration: Math.max(...transcripts.map((t) => t.duration)),
      segments,
      speakers: transcripts.map((_, channel) => ({
        id: channelSpeaker(channel),
        channel,
        total_speech_seconds: summaries.get(channelSpeaker(channel))?.total_speech_seconds ?? 0,
        total_overlap_seconds: summaries.get(channelSpeaker(channel))?.total_overlap_seconds ?? 0,
      })),
      model: main.model,
      warnings: transcripts.flatMap((t, channel) => t.warnings.map((w) => `Channel ${channel}: ${w}`)),
      ...(keyterms.length > 0 ? { found_keyterms: findKeyterms(segments, keyterms) } : {}),
    },
    turns,
    channelOf: new Map(transcripts.map((_, channel) => [channelSpeaker(channel), channel])),
  };
}

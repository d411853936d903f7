/** tag_audio_events: music and singing as segments of kind `event` among the speech, as ElevenLabs Scribe tags them. */
import {
  type AudioEvent,
  type AudioEventKind,
  audioEventSampleRate,
  audioEvents,
  type AudioEventDetector,
} from '../../audio/audio-events.js';
import { decodeBlocks } from '../../audio/decode.js';
import type { Transcript, TranscriptSegment } from './formats.js';

/** Speech is the transcript itself. */
export const taggedEventKinds: readonly AudioEventKind[] = ['music', 'singing'];

/** The music and singing stretches of a file (decoded again at 16 kHz: the detector is far quicker than the decoding). */
export async function detectEvents(
  detector: AudioEventDetector,
  file: { path: string; maxAudioSeconds: number; param: string; signal?: AbortSignal },
): Promise<AudioEvent[]> {
  const blocks = decodeBlocks(file.path, {
    sampleRate: audioEventSampleRate,
    channels: 1,
    blockFrames: audioEventSampleRate * 30,
    maxSeconds: file.maxAudioSeconds,
    param: file.param,
    ...(file.signal ? { signal: file.signal } : {}),
  });
  return audioEvents(await detector.probabilities(blocks, file.signal), taggedEventKinds);
}

/** Every segment gets its kind; events join the speech in time order, and the text carries their labels where they start. */
export function withAudioEvents(transcript: Transcript, events: readonly AudioEvent[]): Transcript {
  const eventSegments: TranscriptSegment[] = events.map((event) => ({
    id: 0,
    kind: 'event',
    start: event.startSeconds,
    end: Math.min(event.endSeconds, transcript.duration),
    text: `(${event.kind})`,
    speaker: null,
    confidence: event.confidence,
    words: [],
    // Decoder figures that an event has none of.
    avg_logprob: 0,
    no_speech_prob: 0,
    temperature: 0,
  }));
  const segments = [...transcript.segments.map((s): TranscriptSegment => ({ ...s, kind: 'speech' })), ...eventSegments]
    .sort((a, b) => a.start - b.start || a.end - b.end)
    .map((s, id) => ({ ...s, id }));
  return {
    ...transcript,
    segments,
    text: segments
      .map((s) => s.text)
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim(),
  };
}

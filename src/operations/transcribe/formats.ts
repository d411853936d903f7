/** Renders a transcript as json, verbose_json, srt, vtt or text. */

export interface TranscriptWord {
  word: string;
  start: number;
  end: number;
  confidence: number;
  speaker: string | null;
  /** With speaker_voice_ids: the profile the speaker was matched to (null: not matched). */
  speaker_name?: string | null;
  voice_id?: string | null;
}

export interface TranscriptSegment {
  id: number;
  /** With tag_audio_events: `event` for a music or singing stretch (text `(music)` / `(singing)`, no words). */
  kind?: 'speech' | 'event';
  start: number;
  end: number;
  text: string;
  speaker: string | null;
  speaker_name?: string | null;
  voice_id?: string | null;
  confidence: number;
  words: TranscriptWord[];
  avg_logprob: number;
  no_speech_prob: number;
  temperature: number;
}

/** A key term the transcript holds. */
export interface FoundKeyterm {
  term: string;
  count: number;
  /** Where each occurrence is, in seconds (its first word's start, its last word's end). */
  occurrences: Array<{ start: number; end: number }>;
}

export interface Transcript {
  text: string;
  language: string;
  language_probability: number;
  duration: number;
  segments: TranscriptSegment[];
  /**
   * total_overlap_seconds: how much of the speaker's speech another speaker talks over. With speaker_voice_ids, the
   * matched profile's name and id and the CAM++ similarity of the speaker to it (all null: not matched).
   */
  speakers: Array<{
    id: string;
    total_speech_seconds: number;
    total_overlap_seconds: number;
    speaker_name?: string | null;
    voice_id?: string | null;
    voice_similarity?: number | null;
  }>;
  model: string;
  warnings: string[];
  /** Only when key terms were given: those the text holds. */
  found_keyterms?: FoundKeyterm[];
}

const round = (seconds: number): number => Math.round(seconds * 1000) / 1000;

function clock(seconds: number, decimalSeparator: ',' | '.'): string {
  const totalMs = Math.max(0, Math.round(seconds * 1000));
  const hours = Math.floor(totalMs / 3_600_000);
  const minutes = Math.floor((totalMs % 3_600_000) / 60_000);
  const secs = Math.floor((totalMs % 60_000) / 1000);
  const ms = totalMs % 1000;
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
  return `${pad(hours)}:${pad(minutes)}:${pad(secs)}${decimalSeparator}${pad(ms, 3)}`;
}

/** What a subtitle cue needs of a segment: the web studio renders its exports from the JSON response with these too. */
type Cue = Pick<TranscriptSegment, 'start' | 'end' | 'text' | 'speaker' | 'speaker_name'>;

/** A named speaker's cue shows the name. */
const cueText = (segment: Cue): string => {
  const label = segment.speaker_name ?? segment.speaker;
  return `${label ? `[${label}] ` : ''}${segment.text.trim()}`;
};

export function toSrt(segments: Cue[]): string {
  return segments.map((s, i) => `${i + 1}\n${clock(s.start, ',')} --> ${clock(s.end, ',')}\n${cueText(s)}\n`).join('\n');
}

export function toVtt(segments: Cue[]): string {
  const cues = segments.map((s) => `${clock(s.start, '.')} --> ${clock(s.end, '.')}\n${cueText(s)}\n`);
  return ['WEBVTT\n', ...cues].join('\n');
}

/** The default JSON: times rounded to milliseconds; word lists only when asked for. */
export function toJson(transcript: Transcript, granularities: { word: boolean; segment: boolean }, verbose: boolean): unknown {
  const segments = transcript.segments.map((s) => ({
    id: s.id,
    ...(s.kind ? { kind: s.kind } : {}),
    start: round(s.start),
    end: round(s.end),
    text: s.text,
    speaker: s.speaker,
    ...(s.speaker_name !== undefined ? { speaker_name: s.speaker_name, voice_id: s.voice_id ?? null } : {}),
    confidence: round(s.confidence),
    ...(granularities.word
      ? { words: s.words.map((w) => ({ ...w, start: round(w.start), end: round(w.end), confidence: round(w.confidence) })) }
      : {}),
    ...(verbose ? { avg_logprob: round(s.avg_logprob), no_speech_prob: round(s.no_speech_prob), temperature: s.temperature } : {}),
  }));
  return {
    text: transcript.text,
    language: transcript.language,
    language_probability: round(transcript.language_probability),
    duration: round(transcript.duration),
    ...(granularities.segment || granularities.word ? { segments } : {}),
    ...(verbose && granularities.word ? { words: segments.flatMap((s) => ('words' in s ? s.words : [])) } : {}),
    speakers: transcript.speakers,
    model: transcript.model,
    warnings: transcript.warnings,
    ...(transcript.found_keyterms
      ? {
          found_keyterms: transcript.found_keyterms.map((k) => ({
            ...k,
            occurrences: k.occurrences.map((o) => ({ start: round(o.start), end: round(o.end) })),
          })),
        }
      : {}),
  };
}

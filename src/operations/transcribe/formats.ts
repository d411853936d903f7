/** Renders a transcript as json, verbose_json, srt, vtt or text. */

export interface TranscriptWord {
  word: string;
  start: number;
  end: number;
  confidence: number;
  speaker: string | null;
  /** The language the word was transcribed in (ISO 639-1): with language=auto, its stretch of speech's. */
  language?: string;
  /** With speaker_voice_ids: the profile the speaker was matched to (null: not matched). */
  speaker_name?: string | null;
  voice_id?: string | null;
}

export interface TranscriptSegment {
  id: number;
  /** With tag_audio_events: `event` for a music or singing stretch (text `(music)` / `(singing)`, no words). */
  kind?: 'speech' | 'event';
  /** With multichannel: the channel (0-based) the segment was said on. */
  channel?: number;
  start: number;
  end: number;
  text: string;
  speaker: string | null;
  speaker_name?: string | null;
  voice_id?: string | null;
  /** The language the segment was transcribed in (ISO 639-1; absent on audio event segments). */
  language?: string;
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
    /** With multichannel: the speaker's channel. */
    channel?: number;
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
export type CueSource = Pick<TranscriptSegment, 'kind' | 'start' | 'end' | 'text' | 'speaker' | 'speaker_name'> & {
  words?: Array<Pick<TranscriptWord, 'word' | 'start' | 'end' | 'speaker' | 'speaker_name'>>;
};

/** How subtitle cues are cut (the request's max_line_chars, max_lines, max_cue_seconds, min_cue_seconds). */
export interface SubtitleRules {
  maxLineChars: number;
  maxLines: number;
  maxCueSeconds: number;
  minCueSeconds: number;
}

/** The usual broadcast limits: two lines of 42 characters, on screen for 1 to 7 seconds. */
export const defaultSubtitleRules: SubtitleRules = { maxLineChars: 42, maxLines: 2, maxCueSeconds: 7, minCueSeconds: 1 };

export interface SubtitleCue {
  start: number;
  end: number;
  /** The speaker's name, else its label; null when not diarized. */
  speaker: string | null;
  lines: string[];
}

/** A word (or a wordless segment, e.g. an audio event) as the cue builder places it. */
interface Unit {
  text: string;
  start: number;
  end: number;
  speaker: string | null;
  /** The last word of a segment: its end is a natural break. */
  segmentEnd: boolean;
  /** An audio event's label, e.g. (music): a cue of its own, under the speech it may span. */
  event: boolean;
}

/** A pause this long between words always ends the cue: a subtitle should not stay up over silence. */
const breakingPauseSeconds = 1.2;
/** A pause this long is a good place to break when a cue must be split. */
const preferredPauseSeconds = 0.4;

const characters = (text: string): number => [...text].length;

function unitsOf(segments: CueSource[]): Unit[] {
  return segments.flatMap((segment): Unit[] => {
    const segmentSpeaker = segment.speaker_name ?? segment.speaker;
    const words = segment.words?.filter((w) => w.word.trim()) ?? [];
    if (words.length === 0)
      return segment.text.trim()
        ? [
            {
              text: segment.text,
              start: segment.start,
              end: segment.end,
              speaker: segmentSpeaker,
              segmentEnd: true,
              event: segment.kind === 'event',
            },
          ]
        : [];
    return words.map((w, i) => ({
      text: w.word,
      start: w.start,
      end: w.end,
      // A word's own speaker wins where diarization split the segment.
      speaker: w.speaker !== undefined && w.speaker !== segment.speaker ? (w.speaker_name ?? w.speaker) : segmentSpeaker,
      segmentEnd: i === words.length - 1,
      event: false,
    }));
  });
}

/** Words joined as Whisper writes them: each carries its leading space (none in scripts without spaces). */
const joined = (units: Unit[]): string =>
  units
    .map((u) => u.text)
    .join('')
    .trim();

/** Greedy line filling at a width; a word longer than the width gets a line of its own. */
function wrapAt(atoms: Unit[], width: number): Unit[][] {
  const lines: Unit[][] = [];
  let line: Unit[] = [];
  for (const atom of atoms) {
    if (line.length > 0 && characters(joined([...line, atom])) > width) {
      lines.push(line);
      line = [];
    }
    line.push(atom);
  }
  if (line.length > 0) lines.push(line);
  return lines;
}

/** The cue's lines: as few as the limit allows, then balanced (the narrowest width giving as few lines). */
function layout(atoms: Unit[], maxLineChars: number): string[] {
  const count = wrapAt(atoms, maxLineChars).length;
  let width = maxLineChars;
  while (width > 1 && wrapAt(atoms, width - 1).length === count) width -= 1;
  return wrapAt(atoms, width).map(joined);
}

const labelAtom = (speaker: string | null): Unit[] =>
  speaker ? [{ text: `[${speaker}]`, start: 0, end: 0, speaker, segmentEnd: false, event: false }] : [];

function fits(units: Unit[], rules: SubtitleRules): boolean {
  const first = units[0];
  const last = units.at(-1);
  if (!first || !last) return true;
  if (last.end - first.start > rules.maxCueSeconds) return false;
  return wrapAt([...labelAtom(first.speaker), ...units], rules.maxLineChars).length <= rules.maxLines;
}

/** How good a place the end of units[index] is to break a cue: sentence ends, then clause ends and pauses. */
function breakScore(units: Unit[], index: number): number {
  const unit = units[index]!;
  const next = units[index + 1];
  const text = unit.text.trim();
  const pause = next ? next.start - unit.end : 0;
  let score = 0;
  if (/[.!?。！？…]["'”」)]*$/u.test(text)) score += 3;
  else if (/[,;:、，；—-]["'”)]*$/u.test(text)) score += 2;
  if (unit.segmentEnd) score += 1;
  if (pause >= preferredPauseSeconds) score += 2;
  return score;
}

/**
 * Subtitle cues from a transcript's segments: cut at word times within the line, line count and duration limits, at a
 * sentence or clause end or a pause where one is near, always at a change of speaker or a long pause.
 */
export function buildCues(segments: CueSource[], rules: SubtitleRules = defaultSubtitleRules): SubtitleCue[] {
  const groups: Unit[][] = [];
  let current: Unit[] = [];
  for (const unit of unitsOf(segments)) {
    const last = current.at(-1);
    if (last && (unit.speaker !== last.speaker || unit.event || last.event || unit.start - last.end >= breakingPauseSeconds)) {
      groups.push(current);
      current = [];
    }
    current.push(unit);
    while (current.length > 1 && !fits(current, rules)) {
      // Too long: break at the best place in the part that fits; among equals the latest, so cues stay full.
      const candidates = current.length - 1;
      let best = candidates - 1;
      let bestScore = -1;
      for (let i = 0; i < candidates; i += 1) {
        const fitting = fits(current.slice(0, i + 1), rules);
        const longEnough = current[i]!.end - current[0]!.start >= rules.minCueSeconds || i === candidates - 1;
        if (!fitting || !longEnough) continue;
        const score = breakScore(current, i);
        if (score >= bestScore) {
          best = i;
          bestScore = score;
        }
      }
      groups.push(current.slice(0, best + 1));
      current = current.slice(best + 1);
    }
  }
  if (current.length > 0) groups.push(current);

  // Segments of speakers talking at once overlap: their cues are put in time order.
  const cues = groups
    .map((units) => ({
      start: units[0]!.start,
      end: units.at(-1)!.end,
      speaker: units[0]!.speaker,
      lines: layout([...labelAtom(units[0]!.speaker), ...units], rules.maxLineChars),
    }))
    .sort((a, b) => a.start - b.start);
  // A short cue stays up for the minimum time where the next one leaves room: the extension never covers the next cue.
  cues.forEach((cue, i) => {
    const nextStart = cues[i + 1]?.start ?? Number.POSITIVE_INFINITY;
    cue.end = Math.min(Math.max(cue.end, cue.start + rules.minCueSeconds), Math.max(nextStart, cue.end));
  });
  return cues;
}

export function toSrt(segments: CueSource[], rules: SubtitleRules = defaultSubtitleRules): string {
  return buildCues(segments, rules)
    .map((c, i) => `${i + 1}\n${clock(c.start, ',')} --> ${clock(c.end, ',')}\n${c.lines.join('\n')}\n`)
    .join('\n');
}

export function toVtt(segments: CueSource[], rules: SubtitleRules = defaultSubtitleRules): string {
  const cues = buildCues(segments, rules).map((c) => `${clock(c.start, '.')} --> ${clock(c.end, '.')}\n${c.lines.join('\n')}\n`);
  return ['WEBVTT\n', ...cues].join('\n');
}

/** The default JSON: times rounded to milliseconds; word lists only when asked for. */
export function toJson(transcript: Transcript, granularities: { word: boolean; segment: boolean }, verbose: boolean): unknown {
  const segments = transcript.segments.map((s) => ({
    id: s.id,
    ...(s.kind ? { kind: s.kind } : {}),
    ...(s.channel !== undefined ? { channel: s.channel } : {}),
    start: round(s.start),
    end: round(s.end),
    text: s.text,
    speaker: s.speaker,
    ...(s.speaker_name !== undefined ? { speaker_name: s.speaker_name, voice_id: s.voice_id ?? null } : {}),
    ...(s.language !== undefined ? { language: s.language } : {}),
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

/** Speaker labels as OpenAI gives unnamed speakers: A, B, ..., Z, AA, AB, ... */
export function sequentialLabel(index: number): string {
  const letter = String.fromCharCode(65 + (index % 26));
  return index < 26 ? letter : sequentialLabel(Math.floor(index / 26) - 1) + letter;
}

/**
 * OpenAI's diarized_json (TranscriptionDiarized): segments of type transcript.text.segment, each speaker named after the
 * known speaker it matched, the others labelled A, B, ... in order of first speech (by channel with multichannel). Audio
 * event segments are left out: they have no speaker.
 */
export function toDiarizedJson(transcript: Transcript, task: 'transcribe' | 'translate'): unknown {
  const labels = new Map<string | null, string>();
  const labelOf = (segment: TranscriptSegment): string => {
    if (segment.speaker_name) return segment.speaker_name;
    if (segment.channel !== undefined) return sequentialLabel(segment.channel);
    if (!labels.has(segment.speaker)) labels.set(segment.speaker, sequentialLabel(labels.size));
    return labels.get(segment.speaker)!;
  };
  const duration = round(transcript.duration);
  return {
    task,
    text: transcript.text,
    segments: transcript.segments
      .filter((s) => s.kind !== 'event')
      .map((s, i) => ({
        type: 'transcript.text.segment',
        id: `seg_${i}`,
        start: round(s.start),
        end: round(s.end),
        text: s.text,
        speaker: labelOf(s),
        ...(s.channel !== undefined ? { channel: s.channel } : {}),
      })),
    duration,
    usage: { type: 'duration', seconds: duration },
  };
}

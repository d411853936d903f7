/**
 * language=auto, language per stretch of speech (issue 35): a recording may hold several languages (a call-centre
 * conversation of a Spanish, an Italian and a Russian speaker), and one language detected for the whole file transcribes
 * the other speakers' turns as mangled text in it, or drops them. Each stretch of speech (VAD, split at pauses) gets
 * Whisper's language probabilities on its own audio; its language is the best of its own log-probabilities plus, as a
 * prior, the log of the other stretches' mean probabilities (weighted by duration): those of the whole recording, and
 * those of its speaker when diarization ran. The prior corrects a short stretch's guess towards the languages the
 * recording holds, without hiding a turn in another language.
 */
import type { SpeechSegment } from '../../audio/vad.js';

export interface LanguageStretch {
  startSeconds: number;
  endSeconds: number;
  /** The diarized speaker of the stretch (null without diarization). */
  speaker: string | null;
  /** Each language's probability on the stretch's own audio; absent for a stretch too short to detect on. */
  probabilities?: Record<string, number>;
}

export interface LanguagePriorWeights {
  /** Weight of the log of the other stretches' mean probabilities, over the whole recording. */
  recording: number;
  /** Weight of the same over the stretch's speaker's other stretches (with diarization). */
  speaker: number;
}

/**
 * Chosen on the tuning part of bench/language-per-turn.ts (bench/results/language-per-turn.json, weights 0, 0.5 and 2
 * each): per-turn accuracy 96.9% at recording 0 or 0.5 with speaker 0, and at speaker 0.5 without the recording's prior,
 * with the lowest error rate at this one; at 2 the priors overrode turns in another language (84-91%). The speaker's
 * prior did not help there: diarization joined speakers of different languages.
 */
export const defaultLanguagePriorWeights: LanguagePriorWeights = { recording: 0.5, speaker: 0 };

/**
 * Stretches shorter than this get no detection of their own (Whisper's guess on a second of audio is poor): they are
 * taken as part of the nearest detected stretch (a word split off by a pause, a breath at the end of a turn), whose
 * language they get. Given the recording's mean instead, a breath after a Spanish turn that followed an English
 * one became English, its chunk was cut off the turn and came back as "music.".
 */
export const minDetectedStretchSeconds = 1;

/** A probability never reaches 0 in the log: one language the detector rules out should not outweigh everything else. */
const probabilityFloor = 1e-6;

/** The language of each stretch (same order). */
export function assignLanguages(stretches: LanguageStretch[], weights: LanguagePriorWeights = defaultLanguagePriorWeights): string[] {
  const detected = stretches.filter((s) => s.probabilities);
  const languages = [...new Set(detected.flatMap((s) => Object.keys(s.probabilities!)))];
  if (languages.length === 0) return stretches.map(() => 'en');
  /** log of the duration-weighted mean probability over `members` other than `self` (undefined: none). */
  const prior = (members: LanguageStretch[], self: LanguageStretch): Map<string, number> | undefined => {
    const others = members.filter((s) => s !== self && s.probabilities);
    const total = others.reduce((sum, s) => sum + (s.endSeconds - s.startSeconds), 0);
    if (others.length === 0 || total <= 0) return undefined;
    return new Map(
      languages.map((language) => {
        const mean = others.reduce((sum, s) => sum + (s.endSeconds - s.startSeconds) * (s.probabilities![language] ?? 0), 0) / total;
        return [language, Math.log(Math.max(mean, probabilityFloor))];
      }),
    );
  };
  const chosen = new Map<LanguageStretch, string>();
  for (const stretch of detected) {
    const ofRecording = prior(stretches, stretch);
    const ofSpeaker =
      stretch.speaker === null
        ? undefined
        : prior(
            stretches.filter((s) => s.speaker === stretch.speaker),
            stretch,
          );
    let best = languages[0]!;
    let bestScore = Number.NEGATIVE_INFINITY;
    for (const language of languages) {
      const score =
        Math.log(Math.max(stretch.probabilities![language] ?? 0, probabilityFloor)) +
        weights.recording * (ofRecording?.get(language) ?? 0) +
        weights.speaker * (ofSpeaker?.get(language) ?? 0);
      if (score > bestScore) {
        best = language;
        bestScore = score;
      }
    }
    chosen.set(stretch, best);
  }
  const gap = (a: LanguageStretch, b: LanguageStretch): number => Math.max(a.startSeconds - b.endSeconds, b.startSeconds - a.endSeconds, 0);
  return stretches.map(
    (stretch) => chosen.get(stretch) ?? chosen.get(detected.reduce((best, s) => (gap(s, stretch) < gap(best, stretch) ? s : best)))!,
  );
}

/**
 * The padded speech segments the recognition pass decodes, cut where the language changes between two stretches inside
 * one, each part with its language: a part reaches `padAfterSeconds` past its last stretch and the next one starts
 * `padBeforeSeconds` before its first, never into the other's speech. A segment whose stretches share one language is
 * kept as it is (a recording in one language is chunked as without per-stretch languages).
 */
export function splitByLanguage(
  segments: SpeechSegment[],
  stretches: Array<{ startSeconds: number; endSeconds: number; language: string }>,
  pads: { padBeforeSeconds: number; padAfterSeconds: number },
): Array<SpeechSegment & { language: string }> {
  const parts: Array<SpeechSegment & { language: string }> = [];
  for (const segment of segments) {
    const inside = stretches.filter((s) => s.startSeconds < segment.endSeconds && s.endSeconds > segment.startSeconds);
    const middle = (segment.startSeconds + segment.endSeconds) / 2;
    const nearest = (inside.length > 0 ? inside : stretches).reduce<(typeof stretches)[number] | undefined>(
      (best, s) =>
        !best || Math.abs((s.startSeconds + s.endSeconds) / 2 - middle) < Math.abs((best.startSeconds + best.endSeconds) / 2 - middle)
          ? s
          : best,
      undefined,
    );
    if (inside.length === 0) {
      parts.push({ ...segment, language: nearest?.language ?? 'en' });
      continue;
    }
    let startSeconds = segment.startSeconds;
    for (let i = 1; i < inside.length; i++) {
      const previous = inside[i - 1]!;
      const next = inside[i]!;
      if (next.language === previous.language) continue;
      parts.push({
        startSeconds,
        endSeconds: Math.min(previous.endSeconds + pads.padAfterSeconds, next.startSeconds),
        language: previous.language,
      });
      startSeconds = Math.max(next.startSeconds - pads.padBeforeSeconds, previous.endSeconds);
    }
    parts.push({ startSeconds, endSeconds: segment.endSeconds, language: inside.at(-1)!.language });
  }
  return parts;
}

/** The language with the most speech (seconds of its stretches); ties to the first. */
export function majorityLanguage(stretches: Array<{ startSeconds: number; endSeconds: number; language: string }>): string | undefined {
  const seconds = new Map<string, number>();
  for (const s of stretches) seconds.set(s.language, (seconds.get(s.language) ?? 0) + s.endSeconds - s.startSeconds);
  return [...seconds.entries()].reduce<[string, number] | undefined>(
    (best, entry) => (!best || entry[1] > best[1] ? entry : best),
    undefined,
  )?.[0];
}

/**
 * Word times of espeak-ng's speech. espeak-ng reports word positions only to programs linked with its library (its
 * synthesis callback's events); voxd runs it as a separate program, whose command line gives audio or phonemes, never
 * times. So the sentence is aligned with espeak-ng's own renditions of its words: the same voice speaks each word alone
 * (one run, the words as sentences a long break apart, which also marks where each ends), and dynamic time warping of
 * log-mel frames lays that sequence of words, with silence between them, onto the sentence. The two are the same
 * formant synthesiser with the same phonemes, so the spectra match closely; what differs (each word's length and
 * intonation in context) is what the warping absorbs.
 */
import { warpingPath } from '../../../audio/dtw.js';
import { melSpectrogram } from '../../../audio/mel.js';
import type { Waveform } from '../../../audio/waveform.js';
import type { TimedSpan } from '../text/word-times.js';

/** The break between the words spoken alone: longer than any silence inside a word (stop closures, 10-80 ms). */
const wordBreakSeconds = 1;
/** A silence at least this long separates two of the words spoken alone (espeak-ng's sentence pause shortens the break). */
const separatorSeconds = 0.6;
/** Silence frames between the words of the warped template: a pause in the sentence is matched with them. */
const pauseFrames = 3;
/** Frames every 10 ms. */
const frameSeconds = 0.01;
const melBands = 40;
/**
 * The warping's cells at most (8 bytes of cost and 1 of step each: 144 MB): a sentence of about 40 s. A longer one (no
 * punctuation to cut it at) gets no word times rather than a memory spike.
 */
const maxWarpCells = 16_000_000;
/** Frames this far below the loudest frame of the words spoken alone are silence. */
const silenceBelowMaxDb = 50;

/**
 * Seconds of `sentence` each unit is spoken in, in order; undefined when the words spoken alone cannot be told apart (or
 * the sentence is too long to warp).
 * `units`: SSML for each unit (a word, or a `[[...]]` phoneme run); `speak`: espeak-ng's audio for an SSML body in the
 * voice, rate and prosody of the sentence, at the sentence's sample rate.
 */
export async function unitSpans(
  sentence: Waveform,
  units: string[],
  speak: (body: string) => Promise<Waveform>,
): Promise<TimedSpan[] | undefined> {
  if (units.length === 0) return [];
  const alone = await speak(units.map((unit) => `<s>${unit}</s>`).join(`<break time="${wordBreakSeconds * 1000}ms"/>`));
  const rate = sentence.sampleRate;
  const options = { sampleRate: rate, fftSize: 512, hopSize: Math.round(rate * frameSeconds), melBands, maxHz: Math.min(8000, rate / 2) };
  const aloneMel = melSpectrogram(alone.samples, options);
  const sentenceMel = melSpectrogram(sentence.samples, options);
  if (sentenceMel.frames === 0) return undefined;

  const energy = (data: Float32Array, t: number): number => {
    let sum = 0;
    for (let b = 0; b < melBands; b++) sum += data[t * melBands + b]!;
    return sum;
  };
  const aloneEnergy = Array.from({ length: aloneMel.frames }, (_, t) => energy(aloneMel.data, t));
  const loudest = Math.max(...aloneEnergy, 1e-12);
  const speech = aloneEnergy.map((e) => e > loudest * 10 ** (-silenceBelowMaxDb / 10));
  // Each unit's speech: runs of speech frames, split where a silence lasts separatorSeconds or more.
  const segments: Array<{ first: number; last: number }> = [];
  let silence = Infinity;
  for (let t = 0; t < speech.length; t++) {
    if (!speech[t]) {
      silence++;
      continue;
    }
    if (silence * frameSeconds >= separatorSeconds || segments.length === 0) segments.push({ first: t, last: t });
    else segments.at(-1)!.last = t;
    silence = 0;
  }
  if (segments.length !== units.length) return undefined;
  const templateFrames = segments.reduce((sum, s) => sum + s.last - s.first + 1, 0) + (segments.length + 1) * pauseFrames;
  if (templateFrames * sentenceMel.frames > maxWarpCells) return undefined;

  // Log mel, floored relative to the loudest band of either: digital silence and quiet noise become the same floor.
  let peak = 1e-12;
  for (const data of [aloneMel.data, sentenceMel.data]) for (const value of data) peak = Math.max(peak, value);
  const floor = peak * 1e-8;
  const logMel = (data: Float32Array): Float32Array => data.map((value) => Math.log10(Math.max(value, floor)));
  const aloneLog = logMel(aloneMel.data);
  const silent = new Float32Array(melBands).fill(Math.log10(floor));
  const template: Float32Array[] = [];
  const unitFrames: Array<{ first: number; end: number }> = [];
  const pause = () => {
    for (let k = 0; k < pauseFrames; k++) template.push(silent);
  };
  pause();
  for (const segment of segments) {
    const first = template.length;
    for (let t = segment.first; t <= segment.last; t++) template.push(aloneLog.subarray(t * melBands, (t + 1) * melBands));
    unitFrames.push({ first, end: template.length });
    pause();
  }
  const templateData = new Float32Array(template.length * melBands);
  for (const [t, frame] of template.entries()) templateData.set(frame, t * melBands);

  const { firstA, lastA } = warpingPath(logMel(sentenceMel.data), templateData, melBands);
  const seconds = (frame: number): number => Math.min(Math.max((frame * options.hopSize) / rate, 0), sentence.samples.length / rate);
  // A unit ends where the next starts at the latest: the path may pair a frame with the end of one and the start of the next.
  return unitFrames.map(({ first, end }, i) => ({
    startSeconds: seconds(firstA[first]!),
    endSeconds: seconds(Math.min(lastA[end - 1]! + 1, firstA[unitFrames[i + 1]?.first ?? template.length - 1]!)),
  }));
}

/**
 * Emotions are rendered by prosody, the same targets for both engines:
 *
 * | emotion   | F0 level | F0 range | rate  | energy | spectral tilt | also                                              |
 * |-----------|----------|----------|-------|--------|---------------|---------------------------------------------------|
 * | neutral   |  0 st    | x1.00    | x1.00 |  0 dB  |  0 dB         |                                                   |
 * | happy     | +2 st    | x1.30    | x1.10 | +2 dB  | +2 dB         |                                                   |
 * | sad       | -2 st    | x0.60    | x0.85 | -4 dB  | -3 dB         |                                                   |
 * | angry     | +1 st    | x1.25    | x1.06 | +4 dB  | +4 dB         |                                                   |
 * | fearful   | +3 st    | x0.85    | x1.12 | -2 dB  | +1 dB         |                                                   |
 * | surprised | +4 st    | x1.60    | x1.00 | +2 dB  | +2 dB         |                                                   |
 * | calm      | -1 st    | x0.75    | x0.90 | -3 dB  | -2 dB         |                                                   |
 * | excited   | +3 st    | x1.50    | x1.15 | +4 dB  | +3 dB         |                                                   |
 * | whisper   | no F0    | -        | x0.95 | -8 dB  | +3 dB         | unvoiced: Kokoro's harmonic source off (F0 = 0),  |
 * |           |          |          |       |        |               | espeak-ng's `whisper` voice variant               |
 *
 * F0 level is in semitones relative to the voice's own pitch; F0 range scales voiced F0 around its mean (Kokoro: inside
 * the model, on the predicted pitch curve; espeak-ng: SSML prosody pitch/range). Rate multiplies the speaking rate;
 * energy is output gain; spectral tilt is a high shelf above 1 kHz (positive = brighter, pressed voice; negative =
 * darker, softer voice).
 */
export const emotions = ['neutral', 'happy', 'sad', 'angry', 'fearful', 'surprised', 'calm', 'excited', 'whisper'] as const;
export type Emotion = (typeof emotions)[number];

export interface Prosody {
  f0Semitones: number;
  f0Range: number;
  rate: number;
  gainDb: number;
  tiltDb: number;
  voiced: boolean;
}

export const prosody: Record<Emotion, Prosody> = {
  neutral: { f0Semitones: 0, f0Range: 1, rate: 1, gainDb: 0, tiltDb: 0, voiced: true },
  happy: { f0Semitones: 2, f0Range: 1.3, rate: 1.1, gainDb: 2, tiltDb: 2, voiced: true },
  sad: { f0Semitones: -2, f0Range: 0.6, rate: 0.85, gainDb: -4, tiltDb: -3, voiced: true },
  angry: { f0Semitones: 1, f0Range: 1.25, rate: 1.06, gainDb: 4, tiltDb: 4, voiced: true },
  fearful: { f0Semitones: 3, f0Range: 0.85, rate: 1.12, gainDb: -2, tiltDb: 1, voiced: true },
  surprised: { f0Semitones: 4, f0Range: 1.6, rate: 1, gainDb: 2, tiltDb: 2, voiced: true },
  calm: { f0Semitones: -1, f0Range: 0.75, rate: 0.9, gainDb: -3, tiltDb: -2, voiced: true },
  excited: { f0Semitones: 3, f0Range: 1.5, rate: 1.15, gainDb: 4, tiltDb: 3, voiced: true },
  whisper: { f0Semitones: 0, f0Range: 1, rate: 0.95, gainDb: -8, tiltDb: 3, voiced: false },
};

export function isEmotion(value: string): value is Emotion {
  return (emotions as readonly string[]).includes(value);
}

/**
 * A rough gender estimate of a voice profile from its median F0 (YIN over the reference speech): used to narrow the
 * built-in voices a cloned voice is matched against. 165 Hz separates typical adult male and female speaking pitch.
 */
import { pitchStatistics, trackPitch } from '../audio/pitch.js';
import type { VoiceAnalyzer } from './service.js';

const boundaryHz = 165;

export const genderAnalyzer: VoiceAnalyzer = {
  name: 'gender',
  async analyse(clips) {
    const f0 = clips.flatMap((clip) => Array.from(trackPitch(clip.samples, clip.sampleRate)));
    const { medianHz } = pitchStatistics(Float32Array.from(f0));
    const estimate = medianHz > 0 ? (medianHz < boundaryHz ? 'male' : 'female') : null;
    return { analysis: { estimate, median_f0_hz: Math.round(medianHz) } };
  },
};

/** Silence measured in test audio: what an SSML break is checked by. */
import type { Waveform } from '../../src/audio/waveform.js';

/** The longest stretch (seconds) of 10 ms frames quieter than -50 dBFS, and where it ends. */
export function longestSilence(audio: Waveform): { seconds: number; endSeconds: number } {
  const frame = Math.round(audio.sampleRate / 100);
  let best = { frames: 0, end: 0 };
  let run = 0;
  for (let f = 0; (f + 1) * frame <= audio.samples.length; f++) {
    let energy = 0;
    for (let i = f * frame; i < (f + 1) * frame; i++) energy += audio.samples[i]! ** 2;
    run = energy / frame < 1e-5 ? run + 1 : 0;
    if (run > best.frames) best = { frames: run, end: f + 1 };
  }
  return { seconds: best.frames / 100, endSeconds: (best.end * frame) / audio.sampleRate };
}

/**
 * Telephone-band audio (issue 35): whether speech came through a narrowband line, and the same line applied to other
 * audio. A G.711 line at 8 kHz leaves nothing above 4 kHz, where wideband speech keeps some of its energy (fricatives,
 * breath); speaker embeddings of such audio are closer to each other than wideband ones (bench/phone-band-speakers.ts),
 * so what compares them must compare like with like.
 */
import { VoxError } from '../core/errors.js';
import { ffmpegBaseArgs, runProcess } from './ffmpeg.js';
import { RealFft } from './fft.js';
import type { Waveform } from './waveform.js';

const frameSamples = 512;
/** The upper band starts here: a line's 4 kHz edge plus the roll-off of the resampler that brought it back to 16 kHz. */
const upperBandFromHz = 4300;
/**
 * Upper-band share of the energy under which speech is narrowband: the geometric middle between the eval clips passed
 * through G.711 and back (all <= 3.4e-5) and the wideband eval files (>= 8.9e-4; the two telephone recordings among them,
 * jfk and pyannote/sample, are rightly under it).
 */
export const narrowbandEnergyShare = 1.7e-4;

/** Share of the energy of `samples` above 4.3 kHz (0 when silent or sampled at 8.6 kHz or less). */
export function upperBandEnergyShare(samples: Float32Array, sampleRate: number): number {
  if (sampleRate / 2 <= upperBandFromHz) return 0;
  const fft = new RealFft(frameSamples);
  const re = new Float64Array(fft.bins);
  const im = new Float64Array(fft.bins);
  // Hann window: with a rectangular one the leakage of the strong low band alone puts about 0.1% above 4 kHz.
  const window = Float64Array.from({ length: frameSamples }, (_, n) => 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / frameSamples));
  const frame = new Float64Array(frameSamples);
  const firstUpperBin = Math.ceil((upperBandFromHz / sampleRate) * frameSamples);
  let upper = 0;
  let total = 0;
  for (let start = 0; start + frameSamples <= samples.length; start += frameSamples) {
    for (let n = 0; n < frameSamples; n++) frame[n] = samples[start + n]! * window[n]!;
    fft.forward(frame, re, im);
    // Bin 0 (DC) is not speech.
    for (let k = 1; k < fft.bins; k++) {
      const energy = re[k]! ** 2 + im[k]! ** 2;
      total += energy;
      if (k >= firstUpperBin) upper += energy;
    }
  }
  return total > 0 ? upper / total : 0;
}

export function isNarrowband(samples: Float32Array, sampleRate: number): boolean {
  return upperBandEnergyShare(samples, sampleRate) < narrowbandEnergyShare;
}

/**
 * `waveform` as a telephone line leaves it: 8 kHz G.711 mu-law and back to its own rate (mono), the channel the
 * benches build phone-band audio with (ffmpeg `-ar 8000 -c:a pcm_mulaw`).
 */
export async function telephoneBand(waveform: Waveform, signal?: AbortSignal): Promise<Waveform> {
  if (waveform.channels !== 1) throw new VoxError('internal', 'The telephone channel takes mono audio.');
  const run = async (args: string[], input: Buffer): Promise<Buffer> => {
    const result = await runProcess('ffmpeg', [...ffmpegBaseArgs, ...args], { input, ...(signal ? { signal } : {}) });
    if (result.exitCode !== 0) throw new VoxError('internal', 'The telephone channel failed.', { cause: result.stderr });
    return result.stdout;
  };
  const samples = Buffer.from(waveform.samples.buffer, waveform.samples.byteOffset, waveform.samples.byteLength);
  const rate = String(waveform.sampleRate);
  const line = await run(['-f', 'f32le', '-ac', '1', '-ar', rate, '-i', 'pipe:0', '-ar', '8000', '-f', 'mulaw', 'pipe:1'], samples);
  const back = await run(['-f', 'mulaw', '-ac', '1', '-ar', '8000', '-i', 'pipe:0', '-ar', rate, '-f', 'f32le', 'pipe:1'], line);
  const out = new Float32Array(back.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = back.readFloatLE(i * 4);
  return { samples: out, sampleRate: waveform.sampleRate, channels: 1 };
}

/** The one audio type inside voxd: interleaved float samples in -1..1. */
export interface Waveform {
  samples: Float32Array;
  sampleRate: number;
  channels: number;
}

export function durationSeconds(waveform: Waveform): number {
  return waveform.samples.length / waveform.channels / waveform.sampleRate;
}

export function frameCount(waveform: Waveform): number {
  return waveform.samples.length / waveform.channels;
}

/** Average of the channels. */
export function toMono(waveform: Waveform): Waveform {
  if (waveform.channels === 1) return waveform;
  const frames = frameCount(waveform);
  const mono = new Float32Array(frames);
  const { channels, samples } = waveform;
  for (let i = 0; i < frames; i++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += samples[i * channels + c]!;
    mono[i] = sum / channels;
  }
  return { samples: mono, sampleRate: waveform.sampleRate, channels: 1 };
}

/** Peak absolute sample value. */
export function peak(samples: Float32Array): number {
  let max = 0;
  for (let i = 0; i < samples.length; i++) {
    const v = Math.abs(samples[i]!);
    if (v > max) max = v;
  }
  return max;
}

/** Root mean square in dBFS (-Infinity for digital silence). */
export function rmsDb(samples: Float32Array): number {
  if (samples.length === 0) return -Infinity;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!;
  return 10 * Math.log10(sum / samples.length);
}

/** Samples as little-endian float32 bytes (how audio is kept beside analyses), and back. */
export function float32Bytes(samples: Float32Array): Buffer {
  const bytes = Buffer.alloc(samples.length * 4);
  for (let i = 0; i < samples.length; i++) bytes.writeFloatLE(samples[i]!, i * 4);
  return bytes;
}

export function float32FromBytes(bytes: Buffer): Float32Array {
  if (bytes.length % 4 !== 0) throw new Error(`${bytes.length} bytes are not float32 samples.`);
  const samples = new Float32Array(bytes.length / 4);
  for (let i = 0; i < samples.length; i++) samples[i] = bytes.readFloatLE(i * 4);
  return samples;
}

/** Sample blocks joined in order into one array. */
export function concatSamples(parts: readonly Float32Array[]): Float32Array {
  const joined = new Float32Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}

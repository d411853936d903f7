/**
 * Audio on realtime sockets, in small pieces: 16-bit PCM or G.711 bytes decoded to float and resampled once, at the edge,
 * to the rate the engines work at; and speech made by an engine turned into 16-bit PCM at the rate a client asked for.
 * The resamplers keep their state between pieces, so there are no clicks at piece boundaries.
 */
import libsamplerate from '@alexanderolsen/libsamplerate-js';
import alawmulaw from 'alawmulaw';
import { VoxError } from '../core/errors.js';

export const liveInputFormats = ['pcm16', 'g711_ulaw', 'g711_alaw'] as const;
export type LiveInputFormat = (typeof liveInputFormats)[number];

/** OpenAI's realtime formats: pcm16 is 24 kHz mono little-endian, G.711 is 8 kHz. */
export const liveInputSampleRates: Record<LiveInputFormat, number> = { pcm16: 24000, g711_ulaw: 8000, g711_alaw: 8000 };

export interface LiveAudioDecoder {
  /** Samples at the output rate for the bytes given; a partial 16-bit sample is kept for the next piece. */
  decode(bytes: Buffer): Float32Array;
  close(): void;
}

async function streamingResampler(inputSampleRate: number, outputSampleRate: number) {
  return inputSampleRate === outputSampleRate
    ? undefined
    : libsamplerate.create(1, inputSampleRate, outputSampleRate, { converterType: libsamplerate.ConverterType.SRC_SINC_MEDIUM_QUALITY });
}

export async function liveAudioDecoder(format: LiveInputFormat, outputSampleRate: number): Promise<LiveAudioDecoder> {
  let resampler = await streamingResampler(liveInputSampleRates[format], outputSampleRate);
  let carry: Buffer = Buffer.alloc(0);
  const toFloat = (bytes: Buffer): Float32Array => {
    if (format === 'g711_ulaw' || format === 'g711_alaw') {
      const pcm = (format === 'g711_ulaw' ? alawmulaw.mulaw : alawmulaw.alaw).decode(bytes);
      return Float32Array.from(pcm, (s) => s / 32768);
    }
    const joined = carry.length > 0 ? Buffer.concat([carry, bytes]) : bytes;
    const whole = joined.length - (joined.length % 2);
    carry = Buffer.from(joined.subarray(whole));
    const samples = new Float32Array(whole / 2);
    for (let i = 0; i < samples.length; i++) samples[i] = joined.readInt16LE(i * 2) / 32768;
    return samples;
  };
  return {
    decode: (bytes) => {
      const samples = toFloat(bytes);
      if (!resampler || samples.length === 0) return samples;
      return resampler.full(samples);
    },
    close: () => {
      resampler?.destroy();
      resampler = undefined;
    },
  };
}

export interface LivePcmEncoder {
  /** 16-bit little-endian PCM at the output rate for the samples given. */
  encode(samples: Float32Array): Buffer;
  close(): void;
}

export async function livePcmEncoder(inputSampleRate: number, outputSampleRate: number): Promise<LivePcmEncoder> {
  let resampler = await streamingResampler(inputSampleRate, outputSampleRate);
  return {
    encode: (samples) => {
      const resampled = resampler && samples.length > 0 ? resampler.full(samples) : samples;
      const out = Buffer.alloc(resampled.length * 2);
      for (let i = 0; i < resampled.length; i++)
        out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(resampled[i]! * 32767))), i * 2);
      return out;
    },
    close: () => {
      resampler?.destroy();
      resampler = undefined;
    },
  };
}

/** Base64 audio of a client event: strict, so that text sent by mistake is an error rather than noise. */
export function decodeBase64Audio(text: string, param: string): Buffer {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) {
    throw new VoxError('invalid_request', `'${param}' must be base64-encoded audio.`, { param });
  }
  return Buffer.from(text, 'base64');
}

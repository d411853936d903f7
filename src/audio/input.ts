/** Admission checks for uploaded audio: runs before any operation, so limits hold even for operations without an engine. */
import { stat } from 'node:fs/promises';
import { VoxError } from '../errors.js';
import { probeAudio, type AudioProbe } from './decode.js';

export interface AudioInput {
  path: string;
  filename: string;
  probe: AudioProbe;
  /** Duration from the container; for streams that do not declare one, the decoder enforces the limit. */
  durationSeconds: number;
}

export interface AudioLimits {
  maxAudioSeconds: number;
}

/** The single file uploaded under `field`; missing or repeated -> 400. */
export function uploadedFile(uploads: Map<string, Array<{ path: string; filename: string; field: string }>>, field: string) {
  const files = uploads.get(field) ?? [];
  if (files.length === 0) throw new VoxError('invalid_request', `'${field}' is required: send it as a file in multipart/form-data.`, { param: field });
  if (files.length > 1) throw new VoxError('invalid_request', `Send exactly one '${field}' file.`, { param: field });
  return files[0]!;
}

export async function admitAudio(file: { path: string; filename: string; field: string }, limits: AudioLimits, signal?: AbortSignal): Promise<AudioInput> {
  const bytes = (await stat(file.path)).size;
  if (bytes === 0) throw new VoxError('invalid_request', `The '${file.field}' upload is empty (0 bytes).`, { param: file.field });
  let probe: AudioProbe;
  try {
    probe = await probeAudio(file.path, signal);
  } catch (error) {
    if (error instanceof VoxError && error.code === 'unsupported_media_type') {
      throw new VoxError('unsupported_media_type', `'${file.filename}' could not be read as audio: send wav, mp3, flac, ogg/opus, m4a/aac, webm or a video with an audio track.`, { param: file.field, cause: error });
    }
    throw error;
  }
  if (probe.durationSeconds > limits.maxAudioSeconds) {
    throw new VoxError('payload_too_large', `The audio lasts ${probe.durationSeconds.toFixed(1)} s; the limit is ${limits.maxAudioSeconds} s (VOXD_MAX_AUDIO_SECONDS).`, { param: file.field });
  }
  return { path: file.path, filename: file.filename, probe, durationSeconds: probe.durationSeconds };
}

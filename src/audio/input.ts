/** Admission checks for uploaded audio: runs before any operation, so limits hold even for operations without an engine. */
import { stat } from 'node:fs/promises';
import { VoxError } from '../core/errors.js';
import { audioTooLong, probeAudio, scanAudioSeconds, type AudioProbe } from './decode.js';

export interface AudioInput {
  path: string;
  filename: string;
  probe: AudioProbe;
  /** Declared by the container, else measured by a packet scan; NaN when neither can tell (the decoder still stops at the limit). */
  durationSeconds: number;
}

export interface AudioLimits {
  maxAudioSeconds: number;
  /** Names the limit in the 413 message. Default: VOXD_MAX_AUDIO_SECONDS. */
  limitName?: string;
}

/** The single file uploaded under `field`; missing or repeated -> 400. */
export function uploadedFile(uploads: Map<string, Array<{ path: string; filename: string; field: string }>>, field: string) {
  const files = uploads.get(field) ?? [];
  if (files.length === 0)
    throw new VoxError(
      'invalid_request',
      `'${field}' is required: send it as a file in multipart/form-data (over HTTP, or its address as audio_url).`,
      { param: field },
    );
  if (files.length > 1) throw new VoxError('invalid_request', `Send exactly one '${field}' file.`, { param: field });
  return files[0]!;
}

export async function admitAudio(
  file: { path: string; filename: string; field: string },
  limits: AudioLimits,
  signal?: AbortSignal,
): Promise<AudioInput> {
  const bytes = (await stat(file.path)).size;
  if (bytes === 0) throw new VoxError('invalid_request', `The '${file.field}' upload is empty (0 bytes).`, { param: file.field });
  let probe: AudioProbe;
  try {
    probe = await probeAudio(file.path, signal);
  } catch (error) {
    if (error instanceof VoxError && error.code === 'unsupported_media_type') {
      throw new VoxError(
        'unsupported_media_type',
        `'${file.filename}' could not be read as audio: send wav, mp3, flac, ogg/opus, m4a/aac, webm or a video with an audio track.`,
        { param: file.field, cause: error },
      );
    }
    throw error;
  }
  // A container without a declared length is measured before any decoding (a 3 h FLAC: 0.3 s instead of a minute of
  // decoding and gigabytes); the scan stops just past the limit, so its length is only "more than". A declared length is
  // trusted here: when it is false (a FLAC header can claim 1 s over 3 h of frames), the decoder's own stop at the limit
  // bounds the cost to that of a file at the limit.
  const declared = !Number.isNaN(probe.durationSeconds);
  const durationSeconds = declared ? probe.durationSeconds : await scanAudioSeconds(file.path, limits.maxAudioSeconds, signal);
  if (durationSeconds > limits.maxAudioSeconds)
    throw audioTooLong(file.field, limits.maxAudioSeconds, limits.limitName, declared ? durationSeconds : undefined);
  return { path: file.path, filename: file.filename, probe, durationSeconds };
}

/**
 * Speaker diarization of a short clip from speech regions: GE2E embeddings of sliding windows over the speech,
 * agglomerative clustering, label smoothing, then turns; each instant gets one speaker. Voice profiles use it to check a
 * reference clip holds one voice; transcription uses the overlap-aware ./overlap-diarization.ts.
 */
import type { Waveform } from '../audio/waveform.js';
import { clusterEmbeddings, labelsToTurns, smoothLabels, type ClusteringOptions, type SpeakerTurn } from './clustering.js';
import type { SpeakerEncoder, WindowEmbedding } from './embedding.js';

export interface DiarizationOptions extends ClusteringOptions {
  /** Default 1.5 s. */
  windowSeconds?: number;
  /** Default 0.75 s. */
  hopSeconds?: number;
  /** Mode-filter width over consecutive windows. Default 3. */
  smoothingWindows?: number;
  /** Default 0.5 s. */
  minTurnSeconds?: number;
}

export interface Diarization {
  turns: SpeakerTurn[];
  /** Number of distinct speakers in `turns`. */
  speakerCount: number;
}

export async function diarize(
  encoder: SpeakerEncoder,
  waveform: Waveform,
  speechRegions: Array<{ startSeconds: number; endSeconds: number }>,
  options: DiarizationOptions = {},
  signal?: AbortSignal,
): Promise<Diarization> {
  const windows = await encoder.embedWindows(waveform, { ...windowOptions(options), regions: speechRegions }, signal);
  return turnsFromWindows(windows, options);
}

function windowOptions(options: DiarizationOptions): { windowSeconds: number; hopSeconds: number } {
  return { windowSeconds: options.windowSeconds ?? 1.5, hopSeconds: options.hopSeconds ?? 0.75 };
}

function turnsFromWindows(windows: WindowEmbedding[], options: DiarizationOptions): Diarization {
  if (windows.length === 0) return { turns: [], speakerCount: 0 };
  const labels = smoothLabels(clusterEmbeddings(windows.map((w) => w.embedding), options), options.smoothingWindows ?? 3);
  const turns = labelsToTurns(windows, labels, { minTurnSeconds: options.minTurnSeconds ?? 0.5 });
  return { turns, speakerCount: new Set(turns.map((t) => t.speaker)).size };
}

/**
 * Speaker diarization from speech regions: GE2E embeddings of sliding windows over the speech, agglomerative clustering,
 * label smoothing, then turns. No overlap detection: each instant gets one speaker (no segmentation model is available).
 */
import type { Waveform } from '../audio/waveform.js';
import { clusterEmbeddings, labelsToTurns, smoothLabels, type ClusteringOptions, type SpeakerTurn } from './clustering.js';
import { embeddingSampleRate, type SpeakerEncoder, type WindowEmbedding } from './embedding.js';

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

/**
 * Incremental form for the transcription pipeline: speech pieces arrive in time order (16 kHz mono, with their start
 * time in the original audio) and are embedded as they come; `finish` clusters everything. Speakers are named
 * SPEAKER_1, SPEAKER_2... in order of first appearance.
 */
export class SpeechDiarizer {
  private readonly windows: WindowEmbedding[] = [];

  constructor(
    private readonly encoder: SpeakerEncoder,
    private readonly options: DiarizationOptions = {},
  ) {}

  /** `recordingLevelDbfs`: RMS level of the whole recording the piece comes from (one gain for every piece). */
  async addSpeech(samples: Float32Array, originalStartSeconds: number, recordingLevelDbfs: number, signal?: AbortSignal): Promise<void> {
    const windows = await this.encoder.embedWindows({ samples, sampleRate: embeddingSampleRate, channels: 1 }, { ...windowOptions(this.options), recordingLevelDbfs }, signal);
    for (const w of windows) {
      this.windows.push({ ...w, startSeconds: w.startSeconds + originalStartSeconds, endSeconds: w.endSeconds + originalStartSeconds });
    }
  }

  finish(speakers: Pick<ClusteringOptions, 'numSpeakers' | 'minSpeakers' | 'maxSpeakers'> = {}): Array<{ speaker: string; startSeconds: number; endSeconds: number }> {
    const { turns } = turnsFromWindows(this.windows, { ...this.options, ...speakers });
    return turns.map((turn) => ({ speaker: `SPEAKER_${turn.speaker + 1}`, startSeconds: turn.startSeconds, endSeconds: turn.endSeconds }));
  }
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

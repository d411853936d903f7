/**
 * Speech-only chunking: VAD segments are concatenated (silence and music between them removed) into chunks of at most
 * `maxChunkSeconds` of speech, so the ASR model never sees long non-speech stretches it could hallucinate over.
 * Each chunk keeps a map from its own timeline back to the original one.
 */
import type { SpeechSegment } from '../../audio/vad.js';

export interface ChunkPiece {
  /** Where the piece starts inside the chunk, and where it came from in the original audio. */
  chunkStartSeconds: number;
  originalStartSeconds: number;
  durationSeconds: number;
}

export interface SpeechChunk {
  pieces: ChunkPiece[];
  originalStartSeconds: number;
  originalEndSeconds: number;
  durationSeconds: number;
}

export function planChunks(segments: SpeechSegment[], maxChunkSeconds: number): SpeechChunk[] {
  const chunks: SpeechChunk[] = [];
  let current: SpeechChunk | undefined;
  for (const segment of segments) {
    const length = segment.endSeconds - segment.startSeconds;
    if (!current || current.durationSeconds + length > maxChunkSeconds) {
      current = { pieces: [], originalStartSeconds: segment.startSeconds, originalEndSeconds: segment.endSeconds, durationSeconds: 0 };
      chunks.push(current);
    }
    current.pieces.push({
      chunkStartSeconds: current.durationSeconds,
      originalStartSeconds: segment.startSeconds,
      durationSeconds: length,
    });
    current.durationSeconds += length;
    current.originalEndSeconds = segment.endSeconds;
  }
  return chunks;
}

/** Maps a time on the chunk's timeline back to the original audio. */
export function toOriginalSeconds(chunk: SpeechChunk, chunkSeconds: number): number {
  let piece = chunk.pieces[0]!;
  for (const candidate of chunk.pieces) {
    if (candidate.chunkStartSeconds <= chunkSeconds) piece = candidate;
    else break;
  }
  const within = Math.min(Math.max(chunkSeconds - piece.chunkStartSeconds, 0), piece.durationSeconds);
  return piece.originalStartSeconds + within;
}

/** End (original time) of the speech piece that contains a chunk time: words must not run across removed silence. */
export function pieceEndSeconds(chunk: SpeechChunk, chunkSeconds: number): number {
  let piece = chunk.pieces[0]!;
  for (const candidate of chunk.pieces) {
    if (candidate.chunkStartSeconds <= chunkSeconds) piece = candidate;
    else break;
  }
  return piece.originalStartSeconds + piece.durationSeconds;
}

/** Collects decoded blocks and hands out sample ranges, dropping what is no longer needed (flat memory). */
export class SampleWindow {
  private blocks: Float32Array[] = [];
  private startSample = 0;
  private endSample = 0;

  push(block: Float32Array): void {
    this.blocks.push(block);
    this.endSample += block.length;
  }

  get availableUntil(): number {
    return this.endSample;
  }

  /** First sample still held. */
  get availableFrom(): number {
    return this.startSample;
  }

  /** Copies [from, to) (clamped to what was decoded). */
  take(fromSample: number, toSample: number): Float32Array {
    const from = Math.max(fromSample, this.startSample);
    const to = Math.min(toSample, this.endSample);
    const out = new Float32Array(Math.max(0, to - from));
    let blockStart = this.startSample;
    for (const block of this.blocks) {
      const blockEnd = blockStart + block.length;
      const a = Math.max(from, blockStart);
      const b = Math.min(to, blockEnd);
      if (a < b) out.set(block.subarray(a - blockStart, b - blockStart), a - from);
      blockStart = blockEnd;
    }
    return out;
  }

  discardBefore(sample: number): void {
    while (this.blocks.length > 0 && this.startSample + this.blocks[0]!.length <= sample) {
      this.startSample += this.blocks.shift()!.length;
    }
  }
}

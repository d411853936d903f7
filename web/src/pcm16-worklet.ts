/**
 * The live microphone's audio thread: samples of the AudioContext (made at the session's 24 kHz, so the browser
 * resamples the microphone) as 16-bit little-endian PCM, posted to the page in 100 ms chunks.
 */

// What the AudioWorklet global scope provides (TypeScript has no library for it).
declare const sampleRate: number;
declare class AudioWorkletProcessor {
  readonly port: MessagePort;
}
declare function registerProcessor(name: string, processor: new () => AudioWorkletProcessor): void;

const chunkSamples = Math.round(sampleRate / 10);

class Pcm16Writer extends AudioWorkletProcessor {
  private chunk = new Int16Array(chunkSamples);
  private filled = 0;

  process(inputs: Float32Array[][]): boolean {
    for (const sample of inputs[0]?.[0] ?? []) {
      this.chunk[this.filled++] = Math.round(Math.max(-1, Math.min(1, sample)) * 0x7fff);
      if (this.filled === chunkSamples) {
        // Int16Array is little-endian on every platform a browser runs on.
        this.port.postMessage(this.chunk.buffer, [this.chunk.buffer]);
        this.chunk = new Int16Array(chunkSamples);
        this.filled = 0;
      }
    }
    return true;
  }
}

registerProcessor('pcm16-writer', Pcm16Writer);

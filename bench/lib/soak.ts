/**
 * Mixed load against a running server: clients loop over transcription, speech, separation and voice creation on real
 * eval audio while a probe asks /v1/health every second. Used by the CI soak test (about a minute) and bench/soak.ts
 * (ten minutes). Every request carries a deadline, so a hung server shows up as requests that never ended.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export type SoakOperation = 'transcribe' | 'tts' | 'separate' | 'voice';
const operations: SoakOperation[] = ['transcribe', 'tts', 'separate', 'voice'];

export interface SoakOptions {
  base: string;
  /** One key per client (so the per-key concurrency limit does not shape the load). */
  keys: string[];
  durationSeconds: number;
  evalDir: string;
  /** A request still running after this is abandoned and counted as unfinished. */
  requestTimeoutSeconds?: number;
}

export interface OperationStats {
  requests: number;
  /** Count per HTTP status ('timeout' / 'network' when no answer came). */
  statuses: Record<string, number>;
  maxSeconds: number;
  meanSeconds: number;
}

export interface SoakResult {
  durationSeconds: number;
  clients: number;
  probes: { count: number; maxMs: number; p50Ms: number; p99Ms: number; over2s: number; failed: number };
  operations: Record<SoakOperation, OperationStats>;
  /** Requests that got no answer before their deadline (a hung server) or no HTTP answer at all. */
  unfinished: number;
  /** Answers outside 2xx, 429 and 503 (which are the server protecting itself). */
  unexpected: number;
}

interface Inputs {
  speech: Blob;
  mixture: Blob;
  clips: Blob[];
}

function loadInputs(evalDir: string): Inputs {
  const file = (relative: string, type: string): Blob => new Blob([readFileSync(path.join(evalDir, relative))], { type });
  return {
    speech: file('asr/whisper_cpp/jfk.wav', 'audio/wav'),
    mixture: file('sep/dnr_mix01/mixture.wav', 'audio/wav'),
    clips: [
      file('vc/resemblyzer_librispeech/3080-5032-0001.wav', 'audio/wav'),
      file('vc/resemblyzer_librispeech/3080-5032-0004.wav', 'audio/wav'),
    ],
  };
}

function request(operation: SoakOperation, inputs: Inputs, base: string): { url: string; init: RequestInit } {
  const form = new FormData();
  switch (operation) {
    case 'transcribe':
      form.set('file', inputs.speech, 'jfk.wav');
      form.set('model', 'whisper-1');
      return { url: `${base}/v1/audio/transcriptions`, init: { method: 'POST', body: form } };
    case 'tts':
      return {
        url: `${base}/v1/audio/tts`,
        init: {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text: 'The quick brown fox jumps over the lazy dog.', voice_id: 'af_heart' }),
        },
      };
    case 'separate':
      form.set('audio', inputs.mixture, 'mixture.wav');
      form.set('stems', 'dialogue,music');
      return { url: `${base}/v1/audio/separate`, init: { method: 'POST', body: form } };
    case 'voice':
      form.set('name', 'soak');
      form.set('consent', 'true');
      for (const [index, clip] of inputs.clips.entries()) form.append('files', clip, `clip-${index}.wav`);
      return { url: `${base}/v1/voices`, init: { method: 'POST', body: form } };
  }
}

/** Means of a series' first, middle and last thirds, and the last over the middle (growth that levels off gives about 1). */
export function thirdsOf(samples: readonly number[]): { first: number; middle: number; last: number; lastToMiddle: number } {
  if (samples.length < 3) throw new Error(`thirds need 3 samples or more, got ${samples.length}`);
  const mean = (part: readonly number[]): number => part.reduce((a, b) => a + b, 0) / part.length;
  const [first, middle, last] = [0, 1, 2].map((i) =>
    mean(samples.slice(Math.round((i * samples.length) / 3), Math.round(((i + 1) * samples.length) / 3))),
  ) as [number, number, number];
  return { first, middle, last, lastToMiddle: last / middle };
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const inputs = loadInputs(options.evalDir);
  const timeoutMs = (options.requestTimeoutSeconds ?? 120) * 1000;
  const end = Date.now() + options.durationSeconds * 1000;
  const stats = Object.fromEntries(operations.map((op) => [op, { requests: 0, statuses: {}, maxSeconds: 0, totalSeconds: 0 }])) as Record<
    SoakOperation,
    { requests: number; statuses: Record<string, number>; maxSeconds: number; totalSeconds: number }
  >;
  let unfinished = 0;
  let unexpected = 0;

  const client = async (key: string, offset: number): Promise<void> => {
    const authorization = { authorization: `Bearer ${key}` };
    for (let turn = offset; Date.now() < end; turn++) {
      const operation = operations[turn % operations.length]!;
      const { url, init } = request(operation, inputs, options.base);
      const started = performance.now();
      let status: string;
      try {
        const response = await fetch(url, {
          ...init,
          headers: { ...(init.headers as Record<string, string>), ...authorization },
          signal: AbortSignal.timeout(timeoutMs),
        });
        const body = await response.arrayBuffer();
        status = String(response.status);
        if (operation === 'voice' && response.status === 201) {
          // Keep the store small: each profile is removed again (the delete is part of the load).
          const { voice_id: voiceId } = JSON.parse(Buffer.from(body).toString('utf8')) as { voice_id: string };
          await (
            await fetch(`${options.base}/v1/voices/${voiceId}`, {
              method: 'DELETE',
              headers: authorization,
              signal: AbortSignal.timeout(timeoutMs),
            })
          ).arrayBuffer();
        }
      } catch (error) {
        status = (error as Error).name === 'TimeoutError' ? 'timeout' : 'network';
      }
      const seconds = (performance.now() - started) / 1000;
      const entry = stats[operation];
      entry.requests++;
      entry.statuses[status] = (entry.statuses[status] ?? 0) + 1;
      entry.maxSeconds = Math.max(entry.maxSeconds, seconds);
      entry.totalSeconds += seconds;
      if (status === 'timeout' || status === 'network') unfinished++;
      else if (!/^2\d\d$/.test(status) && status !== '429' && status !== '503') unexpected++;
      if (status === '429' || status === '503') await new Promise((resolve) => setTimeout(resolve, 500));
    }
  };

  const probeTimes: number[] = [];
  let probeFailures = 0;
  const probe = async (): Promise<void> => {
    // Probes run until the clients are done, so a server that hangs while the last requests finish is seen too.
    while (!clientsDone) {
      const started = performance.now();
      try {
        const response = await fetch(`${options.base}/v1/health`, { signal: AbortSignal.timeout(10_000) });
        await response.arrayBuffer();
        if (!response.ok) probeFailures++;
      } catch {
        probeFailures++;
      }
      const elapsedMs = performance.now() - started;
      probeTimes.push(elapsedMs);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - elapsedMs)));
    }
  };

  let clientsDone = false;
  const started = performance.now();
  const probing = probe();
  await Promise.all(options.keys.map((key, index) => client(key, index)));
  clientsDone = true;
  await probing;
  const sorted = [...probeTimes].sort((a, b) => a - b);
  const round = (value: number, digits: number): number => Math.round(value * 10 ** digits) / 10 ** digits;
  return {
    durationSeconds: round((performance.now() - started) / 1000, 1),
    clients: options.keys.length,
    probes: {
      count: sorted.length,
      maxMs: round(sorted.at(-1) ?? 0, 1),
      p50Ms: round(percentile(sorted, 0.5), 1),
      p99Ms: round(percentile(sorted, 0.99), 1),
      over2s: sorted.filter((ms) => ms > 2000).length,
      failed: probeFailures,
    },
    operations: Object.fromEntries(
      operations.map((op) => {
        const { requests, statuses, maxSeconds, totalSeconds } = stats[op];
        return [
          op,
          { requests, statuses, maxSeconds: round(maxSeconds, 2), meanSeconds: round(requests ? totalSeconds / requests : 0, 2) },
        ];
      }),
    ) as Record<SoakOperation, OperationStats>,
    unfinished,
    unexpected,
  };
}

/** Talking to a real server's jobs API, a local webhook receiver, and long test audio made from eval speech. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../src/core/version.js';
import { evalDir, makeTempDir, sharedModelsDir } from './app.js';

const run = promisify(execFile);
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Job {
  id: string;
  status: string;
  operation: string;
  progress: { stage: string; fraction: number } | null;
  attempts: number;
  started_at: string | null;
  result: unknown;
  error: { code: string; message: string } | null;
  webhook: {
    url: string;
    deliveries: Array<{ id: string; status: string; attempts: Array<{ status: number | null; error: string | null }> }>;
  } | null;
  links: { self: string; events: string };
}

export class Api {
  constructor(
    readonly base: string,
    readonly key: string,
  ) {}

  fetch(route: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${this.base}${route}`, {
      ...init,
      headers: { authorization: `Bearer ${this.key}`, ...(init.headers as Record<string, string> | undefined) },
    });
  }

  /** POSTs an operation with multipart fields and files (paths). */
  postForm(route: string, fields: Record<string, string>, files: Record<string, string> = {}): Promise<Response> {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    for (const [name, file] of Object.entries(files)) form.append(name, new Blob([readFileSync(file)]), path.basename(file));
    return this.fetch(route, { method: 'POST', body: form });
  }

  postJson(route: string, body: unknown): Promise<Response> {
    return this.fetch(route, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  }

  async job(id: string): Promise<Job> {
    const response = await this.fetch(`/v1/jobs/${id}`);
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()) as Job;
  }

  /** Polls a job until `done` holds (default: a final state). */
  async waitFor(
    id: string,
    done: (job: Job) => boolean = (job) => ['succeeded', 'failed', 'cancelled'].includes(job.status),
    timeoutMs = Number(process.env.JOBS_WAIT_MS ?? 300_000),
  ): Promise<Job> {
    for (const deadline = Date.now() + timeoutMs; ; await sleep(200)) {
      const job = await this.job(id);
      if (done(job)) return job;
      if (Date.now() > deadline) throw new Error(`job ${id} not done in time: ${JSON.stringify(job)}`);
    }
  }
}

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  answeredStatus: number;
  /** Wall-clock ms when the request had arrived whole. */
  receivedAtMs: number;
}

/** A webhook receiver on loopback: answers each request with the next status of `statuses` (then 204). */
export async function startReceiver(
  port: number,
  statuses: number[] = [],
): Promise<{ received: ReceivedWebhook[]; url: string; close(): Promise<void> }> {
  const received: ReceivedWebhook[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const answeredStatus = statuses.shift() ?? 204;
      received.push({ headers: request.headers, body, answeredStatus, receivedAtMs: Date.now() });
      response.writeHead(answeredStatus).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { received, url: `http://127.0.0.1:${port}/hooks/voxd`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Creates a key with the CLI on a server's data dir (what an operator does). */
export async function createKey(dataDir: string, name: string, scopes: string): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    [path.join(packageRoot, 'dist/src/cli/main.js'), 'keys', 'create', '--name', name, '--scopes', scopes],
    {
      env: { ...process.env, VOXD_DATA_DIR: dataDir, VOXD_LOCAL_MODEL_DIRS: sharedModelsDir, VOXD_LOG_LEVEL: 'silent' },
    },
  );
  return stdout.trim();
}

export const shortSpeech = path.join(evalDir, 'asr/whisper_cpp/jfk.wav');

/** About `repeats` x 11 s of real speech (the JFK clip looped), as a wav in a temp dir. */
export async function longSpeech(repeats: number): Promise<string> {
  const out = path.join(makeTempDir('long-speech'), `speech-${repeats}.wav`);
  await run('ffmpeg', ['-v', 'error', '-stream_loop', String(repeats - 1), '-i', shortSpeech, '-c', 'copy', out]);
  return out;
}

/** Starts the real server process (the built `npm start` entry point) and talks to it over HTTP. */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { packageRoot } from '../../src/version.js';
import { evalDir, makeTempDir, multipartBody, sharedModelsDir } from '../helpers/app.js';

const key = `vx_${'e2e'.repeat(14)}x`;
const speech = readFileSync(path.join(evalDir, 'asr/pv_leopard/test.wav'));

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('end to end: the real server process', () => {
  let child: ChildProcess;
  let base: string;
  let port: number;
  let output = '';

  before(async () => {
    const entry = path.join(packageRoot, 'dist/src/main.js');
    assert.ok(existsSync(entry), 'run `npm run build` first (npm test does)');
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, [entry], {
      env: {
        ...process.env,
        VOXD_PORT: String(port),
        VOXD_DATA_DIR: makeTempDir('e2e'),
        VOXD_LOCAL_MODEL_DIRS: sharedModelsDir,
        VOXD_API_KEYS: key,
        VOXD_MAX_CONCURRENT_PER_KEY: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    for (let i = 0; i < 100; i++) {
      try {
        if ((await fetch(`${base}/v1/health`)).ok) return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    throw new Error(`server did not start:\n${output}`);
  });

  after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  test('health, capabilities and an authenticated upload over HTTP', async () => {
    assert.equal((await (await fetch(`${base}/v1/health`)).json() as { status: string }).status, 'ok');
    const caps = await (await fetch(`${base}/v1/capabilities`)).json() as { transcribe: { languages: string[] } };
    assert.ok(caps.transcribe.languages.length >= 99);
    const form = new FormData();
    form.set('audio', new Blob([speech], { type: 'audio/wav' }), 'speech.wav');
    form.set('language', 'en');
    const unauthenticated = await fetch(`${base}/v1/audio/transcribe`, { method: 'POST', body: form });
    assert.equal(unauthenticated.status, 401);
    const response = await fetch(`${base}/v1/audio/transcribe`, { method: 'POST', body: form, headers: { authorization: `Bearer ${key}` } });
    const body = await response.json() as { text: string };
    assert.equal(response.status, 200, JSON.stringify(body));
    assert.match(body.text, /apostle of the middle classes/i);
    assert.match(response.headers.get('x-request-id') ?? '', /^req_/);
    // Models are preloaded at start; on a cold model cache that includes converting them, so readiness may trail health.
    let ready = false;
    for (const deadline = Date.now() + 300_000; !ready && Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 500))) {
      ready = ((await (await fetch(`${base}/v1/ready`)).json()) as { ready: boolean }).ready;
    }
    assert.equal(ready, true, 'models are preloaded at start');
  });

  test('a second request while the key has one in flight -> 429', async () => {
    const form = multipartBody({ language: 'en' }, { audio: { filename: 'speech.wav', content: speech } });
    // Send the headers and half the body, then hold the request open.
    const slow = request(`${base}/v1/audio/transcribe`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': form.contentType, 'content-length': form.body.length } });
    const slowResponse = new Promise<number>((resolve, reject) => {
      slow.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      slow.on('error', reject);
    });
    slow.write(form.body.subarray(0, form.body.length / 2));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = await fetch(`${base}/v1/capabilities`);
    assert.equal(second.status, 200, 'public routes are not limited');
    const limited = await fetch(`${base}/v1/audio/tts`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ voice_id: 'x' }) });
    assert.equal(limited.status, 429);
    assert.equal(((await limited.json()) as { error: { code: string } }).error.code, 'rate_limited');
    assert.ok(limited.headers.get('retry-after'));
    slow.end(form.body.subarray(form.body.length / 2));
    assert.notEqual(await slowResponse, 429);
  });

  test('SIGTERM stops the server gracefully', async () => {
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0, output.slice(-2000));
  });
});

/** Starts the real server process (the built `npm start` entry point) and talks to it over HTTP. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { evalDir, multipartBody } from '../helpers/app.js';
import { startServer, testKey, waitUntilReady, type ServerProcess } from '../helpers/server.js';

const key = testKey('e2e');
const speech = readFileSync(path.join(evalDir, 'asr/pv_leopard/test.wav'));

describe('end to end: the real server process', () => {
  let server: ServerProcess;
  let base: string;

  before(async () => {
    server = await startServer({ VOXD_API_KEYS: key, VOXD_MAX_CONCURRENT_PER_KEY: '1' });
    base = server.base;
  });

  after(() => {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  });

  test('health, capabilities and an authenticated upload over HTTP', async () => {
    assert.equal(((await (await fetch(`${base}/v1/health`)).json()) as { status: string }).status, 'ok');
    const caps = (await (await fetch(`${base}/v1/capabilities`)).json()) as { transcribe: { languages: string[] } };
    assert.ok(caps.transcribe.languages.length >= 99);
    const form = new FormData();
    form.set('audio', new Blob([speech], { type: 'audio/wav' }), 'speech.wav');
    form.set('language', 'en');
    const unauthenticated = await fetch(`${base}/v1/audio/transcribe`, { method: 'POST', body: form });
    assert.equal(unauthenticated.status, 401);
    const response = await fetch(`${base}/v1/audio/transcribe`, {
      method: 'POST',
      body: form,
      headers: { authorization: `Bearer ${key}` },
    });
    const body = (await response.json()) as { text: string };
    assert.equal(response.status, 200, JSON.stringify(body));
    assert.match(body.text, /apostle of the middle classes/i);
    assert.match(response.headers.get('x-request-id') ?? '', /^req_/);
    // Models are preloaded at start; on a cold model cache that includes converting them, so readiness may trail health.
    await waitUntilReady(base);
  });

  test('a second request while the key has one in flight -> 429', async () => {
    const form = multipartBody({ language: 'en' }, { audio: { filename: 'speech.wav', content: speech } });
    // Send the headers and half the body, then hold the request open.
    const slow = request(`${base}/v1/audio/transcribe`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': form.contentType, 'content-length': form.body.length },
    });
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
    const limited = await fetch(`${base}/v1/audio/tts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ voice_id: 'x' }),
    });
    assert.equal(limited.status, 429);
    assert.equal(((await limited.json()) as { error: { code: string } }).error.code, 'rate_limited');
    assert.ok(limited.headers.get('retry-after'));
    slow.end(form.body.subarray(form.body.length / 2));
    assert.notEqual(await slowResponse, 429);
  });

  test('SIGTERM stops the server gracefully', async () => {
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.output().slice(-2000));
  });
});

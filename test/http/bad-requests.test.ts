/** Malformed requests: always a 4xx with the error envelope, never a 500, a foreign body, a logged crash or a leaked upload. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { buildTestApp, evalDir, multipartBody, type TestApp } from '../helpers/app.js';

const speech = readFileSync(path.join(evalDir, 'asr/pv_leopard/test.wav'));
const multipartRoutes = ['/v1/audio/transcribe', '/v1/audio/transcriptions', '/v1/audio/vc', '/v1/audio/separate', '/v1/voices'];

interface Envelope {
  error: { type: string; code: string; message: string; param: string | null; request_id: string };
}

function assertEnvelope(body: string, status: number, code: string, actualStatus: number): Envelope {
  assert.equal(actualStatus, status, body);
  const parsed = JSON.parse(body) as Envelope;
  assert.equal(parsed.error.code, code, body);
  assert.match(parsed.error.request_id, /^req_/);
  return parsed;
}

/** Sends raw bytes and returns what came back until the server closed (or `closeAfterMs` passed: the client leaves). */
function rawRequest(port: number, bytes: Buffer | string, closeAfterMs?: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('close', () => resolve(received));
    socket.on('error', () => undefined);
    if (closeAfterMs !== undefined) setTimeout(() => socket.destroy(), closeAfterMs);
  });
}

const parseRaw = (response: string): { status: number; headers: string; body: string } => {
  const [head = '', body = ''] = response.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body };
};

/** A pino logger whose lines land, parsed, in `lines`. */
function capturingLogger(lines: Array<Record<string, unknown>>): pino.Logger {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return pino({ level: 'info' }, sink);
}

async function waitForEmpty(dir: string): Promise<string[]> {
  for (let i = 0; i < 100 && readdirSync(dir).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  return readdirSync(dir);
}

describe('bad requests', () => {
  let t: TestApp;
  let port: number;
  const logLines: Array<Record<string, unknown>> = [];
  before(async () => {
    t = await buildTestApp({ VOXD_MAX_CONCURRENT_PER_KEY: '1', VOXD_RATE_LIMIT_PER_MINUTE: '1000' }, { logger: capturingLogger(logLines) });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });
  after(async () => t.close());

  const post = (url: string, contentType: string, payload: Buffer | string, key = t.key) =>
    t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}`, 'content-type': contentType }, payload });

  test('multipart without a boundary, with an over-long one, or cut short -> 400 on every multipart route', async () => {
    const cut = Buffer.concat([
      Buffer.from('--abc\r\nContent-Disposition: form-data; name="audio"; filename="a.wav"\r\n\r\n'),
      speech.subarray(0, 5000),
    ]);
    for (const url of multipartRoutes) {
      for (const [contentType, payload] of [
        ['multipart/form-data', 'xxx'],
        [`multipart/form-data; boundary=${'b'.repeat(300)}`, 'xxx'],
        ['multipart/form-data; boundary=abc', cut],
      ] as const) {
        const r = await post(url, contentType, payload);
        assert.match(
          assertEnvelope(r.body, 400, 'invalid_request', r.statusCode).error.message,
          /multipart body is malformed/,
          `${url} ${contentType}`,
        );
      }
      const notMultipart = await post(url, 'multipart/form-data; boundary=abc', '{"audio": "x"}');
      assertEnvelope(notMultipart.body, 400, 'invalid_request', notMultipart.statusCode);
    }
    assert.deepEqual(await waitForEmpty(path.join(t.config.dataDir, 'tmp')), []);
  });

  test('a form over the field limit with a file after the fields -> 413, not an answer that never comes', async () => {
    // Repeated keyterms past the form's 64 fields: the parser stopped inside the file part, and its write was waited for forever.
    const form = multipartBody(
      { keyterms: Array.from({ length: 70 }, (_, i) => `term ${i}`) },
      { audio: { filename: 'test.wav', content: speech } },
    );
    const response = await Promise.race([
      post('/v1/audio/transcribe', form.contentType, form.body),
      new Promise<never>((_, reject) => setTimeout(reject, 20_000, new Error('no answer in 20 s'))),
    ]);
    assertEnvelope(response.body, 413, 'payload_too_large', response.statusCode);
    assert.deepEqual(await waitForEmpty(path.join(t.config.dataDir, 'tmp')), []);
  });

  test('a complete upload whose file is still being written when the body ends is accepted (it was taken for a part cut short)', async () => {
    // Over a socket this file's last bytes arrive while its temp file is still behind: it came back 400 "Part terminated early".
    const form = new FormData();
    form.set('language', 'ko');
    form.set('audio', new Blob([readFileSync(path.join(evalDir, 'asr/pv_leopard/test_ko.wav'))]), 'test_ko.wav');
    const response = await fetch(`http://127.0.0.1:${port}/v1/audio/transcribe`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}` },
      body: form,
    });
    assert.equal(response.status, 200, await response.clone().text());
    assert.match(((await response.json()) as { text: string }).text, /걸어갔다/);
  });

  test("the connection closing mid-upload or mid-operation leaves no temp file and frees the key's slot", async () => {
    const part = Buffer.from('--abc\r\nContent-Disposition: form-data; name="audio"; filename="a.wav"\r\n\r\n');
    const end = Buffer.from('\r\n--abc--\r\n');
    const head = (length: number) =>
      `POST /v1/audio/transcribe HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.key}\r\nContent-Type: multipart/form-data; boundary=abc\r\nContent-Length: ${length}\r\n\r\n`;
    // Mid-upload: the body announces more bytes than ever come.
    await rawRequest(
      port,
      Buffer.concat([Buffer.from(head(part.length + speech.length + end.length)), part, speech.subarray(0, 20000)]),
      300,
    );
    // Mid-operation: the whole body arrives, then the client leaves while the transcription runs.
    await rawRequest(port, Buffer.concat([Buffer.from(head(part.length + speech.length + end.length)), part, speech, end]), 300);
    assert.deepEqual(await waitForEmpty(path.join(t.config.dataDir, 'tmp')), []);
    // The limit is one request in flight: a slot held by a departed client would make this a 429.
    const r = await t.app.inject({ method: 'GET', url: '/v1/voices?type=cloned', headers: { authorization: `Bearer ${t.key}` } });
    assert.equal(r.statusCode, 200, r.body);
  });

  test("a path id over 100 characters -> 400 envelope, not the framework's 414", async () => {
    const r = await t.app.inject({ method: 'GET', url: `/v1/voices/${'a'.repeat(101)}`, headers: { authorization: `Bearer ${t.key}` } });
    assertEnvelope(r.body, 400, 'invalid_request', r.statusCode);
    assert.match(r.headers['x-request-id'] as string, /^req_/);
    const badEncoding = await t.app.inject({
      method: 'GET',
      url: '/v1/audio/files/%E0%A4%A',
      headers: { authorization: `Bearer ${t.key}` },
    });
    assertEnvelope(badEncoding.body, 400, 'invalid_request', badEncoding.statusCode);
  });

  test("a NUL byte in a header -> 400 envelope written by the server, not Node's own body", async () => {
    const response = parseRaw(await rawRequest(port, 'GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Test: a\x00b\r\n\r\n'));
    assert.equal(response.status, 400);
    assert.match(response.headers, /content-type: application\/json/);
    assertEnvelope(response.body, 400, 'invalid_request', response.status);
  });

  test('two Authorization headers -> 400, whichever comes first', async () => {
    for (const values of [
      [`Bearer ${t.key}`, 'Bearer bad'],
      ['Bearer bad', `Bearer ${t.key}`],
    ]) {
      // An array sends the header once per value, as on the wire.
      const r = await t.app.inject({ method: 'GET', url: '/v1/voices', headers: { authorization: values as unknown as string } });
      assert.equal(assertEnvelope(r.body, 400, 'invalid_request', r.statusCode).error.param, 'authorization');
    }
    const response = parseRaw(
      await rawRequest(
        port,
        `GET /v1/voices HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.key}\r\nAuthorization: Bearer bad\r\nConnection: close\r\n\r\n`,
      ),
    );
    assertEnvelope(response.body, 400, 'invalid_request', response.status);
  });

  test('401, 403 and 429 log no error', async () => {
    logLines.length = 0;
    const body = { text: 'hi', voice_id: 'af_heart' };
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/audio/tts', payload: body })).statusCode, 401);
    assert.equal(
      (
        await t.app.inject({
          method: 'POST',
          url: '/v1/audio/tts',
          headers: { authorization: `Bearer ${await t.keyWith(['vc'])}` },
          payload: body,
        })
      ).statusCode,
      403,
    );
    const limited = await buildTestApp({ VOXD_RATE_LIMIT_PER_MINUTE: '1' }, { logger: capturingLogger(logLines) });
    try {
      const call = () =>
        limited.app.inject({ method: 'GET', url: '/v1/voices?type=cloned', headers: { authorization: `Bearer ${limited.key}` } });
      assert.equal((await call()).statusCode, 200);
      assert.equal((await call()).statusCode, 429);
    } finally {
      await limited.close();
    }
    assert.ok(logLines.length > 0);
    const errors = logLines.filter((line) => Number(line.level) >= 50);
    assert.deepEqual(errors, []);
  });

  test('mp3 and aac at a rate their encoders lack are written at the next MPEG rate, not a 500 (found by the fuzzer)', async () => {
    for (const format of ['mp3', 'aac']) {
      const r = await t.app.inject({
        method: 'POST',
        url: '/v1/audio/tts',
        headers: { authorization: `Bearer ${t.key}` },
        payload: { text: "'Ëq", voice_id: 'espeak-ca', format, sample_rate: 29110 },
      });
      assert.equal(r.statusCode, 200, r.body);
      assert.ok(r.rawPayload.length > 0);
    }
  });

  test('a wrong method on a known path -> 405 with Allow; an unknown path stays 404', async () => {
    const r = await t.app.inject({ method: 'DELETE', url: '/v1/health' });
    assertEnvelope(r.body, 405, 'method_not_allowed', r.statusCode);
    assert.equal(r.headers.allow, 'GET, HEAD');
    const voice = await t.app.inject({ method: 'POST', url: '/v1/voices/af_heart' });
    assertEnvelope(voice.body, 405, 'method_not_allowed', voice.statusCode);
    assert.deepEqual((voice.headers.allow as string).split(', ').sort(), ['DELETE', 'GET', 'HEAD', 'PATCH']);
    const unknown = await t.app.inject({ method: 'DELETE', url: '/v1/nothing' });
    assertEnvelope(unknown.body, 404, 'not_found', unknown.statusCode);
  });
});

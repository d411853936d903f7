import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, evalDir, multipartBody, type TestApp } from '../helpers/app.js';

const speech = readFileSync(path.join(evalDir, 'asr/pv_leopard/test.wav'));

interface Envelope {
  error: { type: string; code: string; message: string; param: string | null; request_id: string };
}

function assertEnvelope(body: string, status: number, code: string, actualStatus: number, param?: string): Envelope {
  assert.equal(actualStatus, status, body);
  const parsed = JSON.parse(body) as Envelope;
  assert.equal(parsed.error.code, code);
  assert.equal(typeof parsed.error.type, 'string');
  assert.ok(parsed.error.message.length > 0);
  assert.match(parsed.error.request_id, /^req_/);
  if (param !== undefined) assert.equal(parsed.error.param, param);
  return parsed;
}

describe('auth and error envelope', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ VOXD_MAX_UPLOAD_MB: '1', VOXD_MAX_AUDIO_SECONDS: '8' });
  });
  after(async () => t.close());

  const transcribe = (headers: Record<string, string>, fields: Record<string, string> = {}, content = speech, filename = 'speech.wav') => {
    const form = multipartBody(fields, { audio: { filename, content } });
    return t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcribe',
      headers: { 'content-type': form.contentType, ...headers },
      payload: form.body,
    });
  };

  test('missing key -> 401', async () => {
    const r = await transcribe({});
    assertEnvelope(r.body, 401, 'unauthorized', r.statusCode);
  });

  test('malformed and unknown keys -> 401', async () => {
    for (const key of ['nope', `vx_${'A'.repeat(43)}`]) {
      const r = await transcribe({ authorization: `Bearer ${key}` });
      assertEnvelope(r.body, 401, 'unauthorized', r.statusCode);
    }
  });

  test('revoked key -> 401', async () => {
    const created = await t.container.apiKeys.create('to-revoke', ['transcribe']);
    await t.container.apiKeys.revoke(created.record.id);
    const r = await transcribe({ authorization: `Bearer ${created.key}` });
    assertEnvelope(r.body, 401, 'unauthorized', r.statusCode);
  });

  test('key without the scope -> 403', async () => {
    const r = await transcribe({ authorization: `Bearer ${await t.keyWith(['tts'])}` });
    assertEnvelope(r.body, 403, 'forbidden', r.statusCode);
  });

  test('unknown route -> 404 envelope', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/v1/nothing' });
    assertEnvelope(r.body, 404, 'not_found', r.statusCode);
  });

  test('schema violations -> 400 with the field in param', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/tts',
      headers: { authorization: `Bearer ${t.key}` },
      payload: { voice_id: 'af_heart' },
    });
    assertEnvelope(r.body, 400, 'invalid_request', r.statusCode, 'text');
    const bad = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/tts',
      headers: { authorization: `Bearer ${t.key}` },
      payload: { text: 'hi', voice_id: 'a', speed: 9 },
    });
    assertEnvelope(bad.body, 400, 'invalid_request', bad.statusCode, 'speed');
  });

  test('invalid JSON -> 400', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/tts',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      payload: '{"text": ',
    });
    assertEnvelope(r.body, 400, 'invalid_request', r.statusCode);
  });

  test('closed sets -> 422 listing the valid values', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/tts',
      headers: { authorization: `Bearer ${t.key}` },
      payload: { text: 'hi', voice_id: 'a', emotion: 'bored' },
    });
    const e = assertEnvelope(r.body, 422, 'unsupported_value', r.statusCode, 'emotion');
    assert.match(e.error.message, /bored/);
    assert.match(e.error.message, /whisper/);
    const language = await transcribe({ authorization: `Bearer ${t.key}` }, { language: 'xx' });
    assert.match(assertEnvelope(language.body, 422, 'unsupported_value', language.statusCode, 'language').error.message, /\ben\b/);
    const stems = multipartBody({ stems: 'dialogue,vocals' }, { audio: { filename: 'a.wav', content: speech } });
    const s = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/separate',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': stems.contentType },
      payload: stems.body,
    });
    assert.match(assertEnvelope(s.body, 422, 'unsupported_value', s.statusCode, 'stems').error.message, /ambience/);
    const format = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/tts',
      headers: { authorization: `Bearer ${t.key}` },
      payload: { text: 'hi', voice_id: 'a', format: 'aiff' },
    });
    assertEnvelope(format.body, 422, 'unsupported_value', format.statusCode, 'format');
  });

  test('text over 5000 characters -> 400 naming the limit, before the voice is looked up', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/tts',
      headers: { authorization: `Bearer ${t.key}` },
      payload: { text: 'a'.repeat(5001), voice_id: 'a' },
    });
    assert.match(assertEnvelope(r.body, 400, 'invalid_request', r.statusCode, 'text').error.message, /5000/);
  });

  test('zero-byte upload -> 400', async () => {
    const r = await transcribe({ authorization: `Bearer ${t.key}` }, {}, Buffer.alloc(0));
    assertEnvelope(r.body, 400, 'invalid_request', r.statusCode, 'audio');
  });

  test('garbage upload -> 415', async () => {
    const r = await transcribe(
      { authorization: `Bearer ${t.key}` },
      {},
      Buffer.from('this is not audio at all, just text '.repeat(100)),
      'notes.txt',
    );
    assertEnvelope(r.body, 415, 'unsupported_media_type', r.statusCode, 'audio');
  });

  test('missing file field -> 400', async () => {
    const form = multipartBody({ language: 'en', audio: 'not-a-file' }, {});
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcribe',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    });
    assertEnvelope(r.body, 400, 'invalid_request', r.statusCode, 'audio');
  });

  test('upload over the byte limit -> 413', async () => {
    const big = Buffer.concat([speech, Buffer.alloc(1.2 * 1024 * 1024)]);
    const r = await transcribe({ authorization: `Bearer ${t.key}` }, {}, big);
    assertEnvelope(r.body, 413, 'payload_too_large', r.statusCode);
  });

  test('audio over the duration limit -> 413 before decoding', async () => {
    const long = readFileSync(path.join(evalDir, 'asr/whisper_cpp/jfk.wav'));
    const r = await transcribe({ authorization: `Bearer ${t.key}` }, {}, long);
    assert.match(assertEnvelope(r.body, 413, 'payload_too_large', r.statusCode, 'audio').error.message, /limit is 8 s/);
  });

  test('wrong content type -> 415', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcribe',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'text/plain' },
      payload: 'hello',
    });
    assertEnvelope(r.body, 415, 'unsupported_media_type', r.statusCode);
  });

  test('uploads are removed after the response, also after an error', async () => {
    const r = await transcribe({ authorization: `Bearer ${t.key}` }, {}, Buffer.from('not audio'.repeat(100)));
    assertEnvelope(r.body, 415, 'unsupported_media_type', r.statusCode);
    // Removal runs in the onResponse hook, just after the response is sent.
    const { readdirSync } = await import('node:fs');
    const tmp = path.join(t.config.dataDir, 'tmp');
    for (let i = 0; i < 50 && readdirSync(tmp).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(readdirSync(tmp), []);
  });

  test('a header-only file is not audio -> 415, never a crash', async () => {
    const headerOnly = await transcribe({ authorization: `Bearer ${t.key}` }, {}, speech.subarray(0, 30));
    assertEnvelope(headerOnly.body, 415, 'unsupported_media_type', headerOnly.statusCode);
  });
});

describe('rate limits', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ VOXD_RATE_LIMIT_PER_MINUTE: '3' });
  });
  after(async () => t.close());

  test('over the per-key rate -> 429 with Retry-After and RateLimit headers; other keys unaffected', async () => {
    const call = (key: string) =>
      t.app.inject({ method: 'POST', url: '/v1/audio/tts', headers: { authorization: `Bearer ${key}` }, payload: { voice_id: 'a' } });
    for (let i = 0; i < 3; i++) assert.equal((await call(t.key)).statusCode, 400);
    const limited = await call(t.key);
    assertEnvelope(limited.body, 429, 'rate_limited', limited.statusCode);
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal(limited.headers['ratelimit-limit'], '3');
    assert.equal(limited.headers['ratelimit-remaining'], '0');
    assert.equal((await call(await t.keyWith(['tts']))).statusCode, 400);
  });
});

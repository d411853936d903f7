import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.js';

describe('OpenAPI, docs, health, capabilities, metrics', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(async () => t.close());

  test('/openapi.json lists every route with its request schema', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(r.statusCode, 200);
    const doc = r.json() as {
      openapi: string;
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: { properties: Record<string, { format?: string }> } }> } }>
      >;
    };
    assert.match(doc.openapi, /^3\./);
    for (const route of [
      '/v1/audio/tts',
      '/v1/audio/tts/with-timestamps',
      '/v1/audio/vc',
      '/v1/audio/separate',
      '/v1/audio/transcribe',
      '/v1/audio/align',
      '/v1/dubbing',
    ])
      assert.ok(doc.paths[route]?.post, route);
    for (const route of ['/v1/health', '/v1/ready', '/v1/capabilities', '/metrics']) assert.ok(doc.paths[route]?.get, route);
    const transcribe = doc.paths['/v1/audio/transcribe']!.post!.requestBody!.content['multipart/form-data']!.schema;
    assert.equal(transcribe.properties.audio?.format, 'binary');
    // Issue 38: a speaker per channel, OpenAI's diarized format and known speakers, on both transcription routes.
    const transcriptions = doc.paths['/v1/audio/transcriptions']!.post!.requestBody!.content['multipart/form-data']!.schema;
    for (const field of ['multichannel', 'known_speaker_names', 'known_speaker_references'])
      assert.ok(transcribe.properties[field] && transcriptions.properties[field], field);
    for (const field of ['known_speaker_names[]', 'known_speaker_references[]', 'chunking_strategy'])
      assert.ok(transcriptions.properties[field], field);
    assert.ok((transcriptions.properties.response_format as { enum?: string[] }).enum?.includes('diarized_json'));
    assert.ok(doc.paths['/v1/audio/tts']!.post!.requestBody!.content['application/json']);
    // Issue 40: dubbing takes an upload (or audio_url) and its languages, voices and consent.
    const dubbing = doc.paths['/v1/dubbing']!.post!.requestBody!.content['multipart/form-data']!.schema;
    assert.equal(dubbing.properties.audio?.format, 'binary');
    for (const field of ['audio_url', 'target_language', 'source_language', 'voices', 'consent', 'keep_background', 'save_voices'])
      assert.ok(dubbing.properties[field], field);
  });

  test('docs page', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/docs' });
    assert.equal(r.statusCode, 200);
    assert.match(r.headers['content-type'] as string, /html/);
  });

  test('health needs no key; ready reports models', async () => {
    const health = await t.app.inject({ method: 'GET', url: '/v1/health' });
    assert.equal(health.statusCode, 200);
    assert.equal(health.json().status, 'ok');
    const ready = await t.app.inject({ method: 'GET', url: '/v1/ready' });
    assert.ok([200, 503].includes(ready.statusCode));
    assert.ok(Array.isArray(ready.json().models));
  });

  test('capabilities per operation, with limits and models', async () => {
    const caps = (await t.app.inject({ method: 'GET', url: '/v1/capabilities' })).json();
    assert.ok(caps.transcribe.languages.includes('en'));
    assert.ok(caps.transcribe.response_formats.includes('srt'));
    assert.deepEqual(caps.separate.stems, ['dialogue', 'music', 'sfx', 'ambience']);
    assert.ok(caps.tts.emotions.includes('whisper'));
    assert.ok(caps.tts.formats.includes('opus'));
    assert.ok(caps.tts.languages.length >= 80, `${caps.tts.languages.length} TTS languages`);
    assert.equal(caps.dub.max_tempo, 1.25);
    assert.equal(caps.limits.max_audio_seconds, 7200);
    assert.ok(caps.models.some((m: { id: string }) => m.id === 'silero-vad'));
  });

  test('every documented route lists its success and error responses, with length limits on text', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<
        string,
        Record<
          string,
          {
            responses: Record<string, { content?: Record<string, unknown> }>;
            description?: string;
            requestBody?: {
              content: Record<string, { schema: { properties: Record<string, { maxLength?: number; description?: string }> } }>;
            };
          }
        >
      >;
    };
    for (const [route, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const statuses = Object.keys(operation.responses);
        // WebSocket routes succeed with 101 Switching Protocols.
        assert.ok(
          statuses.some((s) => s.startsWith('2') || s === '101'),
          `${method} ${route}: ${statuses.join(',')}`,
        );
        assert.ok(statuses.includes('500'), `${method} ${route}`);
        if (route !== '/v1/health' && route !== '/v1/ready' && route !== '/v1/capabilities')
          assert.ok(statuses.includes('401'), `${method} ${route}`);
      }
    }
    assert.ok(doc.paths['/v1/audio/tts']!.post!.responses['200']!.content!['audio/mpeg']);
    assert.ok(doc.paths['/v1/voices/{voice_id}']!.delete!.responses['404']);
    // The schema bounds the document (SSML markup included); the service counts its text against 5000 (errors.test.ts).
    assert.equal(doc.paths['/v1/audio/tts']!.post!.requestBody!.content['application/json']!.schema.properties.text!.maxLength, 20000);
    // SSML on the speech socket and cloned voices in blends are described where they are used (issue 39).
    assert.match(doc.paths['/v1/audio/tts/stream']!.get!.description!, /<speak> document.*error event/s);
    assert.match(
      doc.paths['/v1/audio/tts']!.post!.requestBody!.content['application/json']!.schema.properties.voice_id!.description!,
      /blend.*cloned voices/,
    );
  });

  test('metrics need a key with scope metrics (or admin)', async () => {
    assert.equal((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 401);
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${await t.keyWith(['tts'])}` } })).statusCode,
      403,
    );
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${await t.keyWith(['metrics'])}` } }))
        .statusCode,
      200,
    );
  });

  test('VOXD_METRICS_PUBLIC=true serves metrics without a key', async () => {
    const open = await buildTestApp({ VOXD_METRICS_PUBLIC: 'true' });
    try {
      assert.equal((await open.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 200);
    } finally {
      await open.close();
    }
  });

  test('metrics count requests by route and status', async () => {
    await t.app.inject({ method: 'POST', url: '/v1/audio/tts', payload: {} });
    const text = (await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${t.key}` } })).body;
    assert.match(text, /voxd_http_requests_total\{method="POST",route="\/v1\/audio\/tts",status="401"\} 1/);
    assert.match(text, /voxd_http_request_seconds_bucket/);
    assert.match(text, /voxd_queue_depth/);
  });
});

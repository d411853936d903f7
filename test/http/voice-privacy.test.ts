/**
 * A cloned voice belongs to the key that made it (and to admin keys): every route that names a voice, for the owner,
 * another key with the `voices` scope, a key without it, a key with only `voices`, and an admin key. Writes and speech
 * (tts, conversion, previews) check the scope first (403 whatever the voice); everything else answers another key's
 * voice exactly as a voice that does not exist (404).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { decodeFile } from '../../src/audio/decode.js';
import { encodeWaveform } from '../../src/audio/encode.js';
import { buildTestApp, createVoice, evalDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';
import { worldAddon } from '../helpers/vc-assets.js';

const clipsDir = path.join(evalDir, 'vc/resemblyzer_librispeech');
const missingId = 'voice_00000000000000000000';
const callers = ['owner', 'other', 'noVoicesScope', 'voicesOnly', 'admin'] as const;
type Caller = (typeof callers)[number];

describe('cloned voices are private to their owner (and admin keys)', () => {
  let t: TestApp;
  let keys: Record<Caller, string>;
  let voiceId: string;
  /** 2 s of another speaker: a short conversion input. */
  let source: Buffer;

  const create = async (key: string): Promise<string> => {
    // Swahili: espeak-ng speaks it, so tts needs no Kokoro blend and stays quick; conversion still runs.
    const clip = { filename: 'a.wav', content: readFileSync(path.join(clipsDir, '3080-5032-0001.wav')) };
    return (await createVoice(t, { name: 'Reader 3080', language: 'sw' }, clip, key)).voice_id;
  };

  before(async () => {
    await Promise.all([...['kokoro-82m', 'kokoro-voices', 'silero-vad', 'resemblyzer-ge2e'].map((id) => modelFile(id, '')), worldAddon()]);
    t = await buildTestApp();
    keys = {
      owner: await t.keyWith(['voices', 'tts', 'vc']),
      other: await t.keyWith(['voices', 'tts', 'vc']),
      noVoicesScope: await t.keyWith(['tts', 'vc']),
      voicesOnly: await t.keyWith(['voices']),
      admin: await t.keyWith(['admin']),
    };
    voiceId = await create(keys.owner);
    const speech = await decodeFile(path.join(clipsDir, '1998-15444-0001.wav'));
    source = await encodeWaveform({ ...speech, samples: speech.samples.subarray(0, speech.sampleRate * 2) }, { format: 'wav' });
  });
  after(async () => t.close());

  const as = (caller: Caller) => ({ authorization: `Bearer ${keys[caller]}` });
  const routes: Record<string, (caller: Caller, id: string) => Promise<LightMyRequestResponse>> = {
    'GET /v1/voices/{id}': (caller, id) => t.app.inject({ method: 'GET', url: `/v1/voices/${id}`, headers: as(caller) }),
    'GET /v1/voices/{id}/preview': (caller, id) => t.app.inject({ method: 'GET', url: `/v1/voices/${id}/preview`, headers: as(caller) }),
    'POST /v1/audio/tts voice_id': (caller, id) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/audio/tts',
        headers: as(caller),
        payload: { text: 'Habari.', voice_id: id, format: 'wav' },
      }),
    'POST /v1/audio/speech voice': (caller, id) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/audio/speech',
        headers: as(caller),
        payload: { input: 'Habari.', voice: id, response_format: 'wav' },
      }),
    'POST /v1/audio/vc target_voice_id': (caller, id) => {
      const form = multipartBody({ target_voice_id: id }, { audio: { filename: 'source.wav', content: source } });
      return t.app.inject({
        method: 'POST',
        url: '/v1/audio/vc',
        headers: { ...as(caller), 'content-type': form.contentType },
        payload: form.body,
      });
    },
    'PATCH /v1/voices/{id}': (caller, id) =>
      t.app.inject({ method: 'PATCH', url: `/v1/voices/${id}`, headers: as(caller), payload: { description: `set by ${caller}` } }),
  };
  /** Scopes are checked before the voice is looked up: PATCH and DELETE need `voices`; speech (previews included) `tts` or `vc`. */
  const speaks = (route: string): boolean => !route.startsWith('PATCH') && route !== 'GET /v1/voices/{id}';
  const expected = (route: string, caller: Caller): number => {
    if (caller === 'owner' || caller === 'admin') return 200;
    if (caller === 'noVoicesScope' && route.startsWith('PATCH')) return 403;
    if (caller === 'voicesOnly' && speaks(route)) return 403;
    return 404;
  };

  /** 404 indistinguishable from a voice that does not exist: same envelope and message, the id aside. */
  function assertHidden(response: LightMyRequestResponse, missing: LightMyRequestResponse): void {
    assert.equal(response.statusCode, 404, response.body);
    assert.equal(missing.statusCode, 404, missing.body);
    const [error, missingError] = [response.json().error, missing.json().error];
    assert.match(error.request_id, /^req_/);
    assert.equal(error.code, 'not_found');
    assert.deepEqual(
      { ...error, request_id: null, message: error.message.replaceAll(voiceId, missingId) },
      { ...missingError, request_id: null },
    );
  }

  for (const [route, call] of Object.entries(routes)) {
    test(route, async () => {
      for (const caller of callers) {
        const response = await call(caller, voiceId);
        const status = expected(route, caller);
        if (status === 404) assertHidden(response, await call(caller, missingId));
        else assert.equal(response.statusCode, status, `${route} as ${caller}: ${response.body}`);
      }
    });
  }

  test('GET /v1/voices lists a cloned voice to its owner and admin keys only, built-in voices to every key', async () => {
    for (const caller of callers) {
      for (const url of ['/v1/voices?type=cloned', '/v1/voices']) {
        const response = await t.app.inject({ method: 'GET', url, headers: as(caller) });
        assert.equal(response.statusCode, 200);
        const ids = (response.json().voices as Array<{ voice_id: string }>).map((v) => v.voice_id);
        assert.equal(ids.includes(voiceId), caller === 'owner' || caller === 'admin', `${url} as ${caller}`);
        assert.equal(ids.includes('af_heart'), url === '/v1/voices', `${url} as ${caller}`);
      }
    }
  });

  test('a built-in voice works with every key, and speaks (preview included) only with the tts scope', async () => {
    for (const caller of callers) {
      assert.equal((await routes['GET /v1/voices/{id}']!(caller, 'af_heart')).statusCode, 200, caller);
      const canSpeak = caller !== 'voicesOnly';
      const spoken = await t.app.inject({
        method: 'POST',
        url: '/v1/audio/tts',
        headers: as(caller),
        payload: { text: 'Hi.', voice_id: 'af_heart', format: 'wav' },
      });
      assert.equal(spoken.statusCode, canSpeak ? 200 : 403, `${caller}: ${spoken.body}`);
      const preview = await routes['GET /v1/voices/{id}/preview']!(caller, 'af_heart');
      assert.equal(preview.statusCode, canSpeak ? 200 : 403, `${caller} preview: ${preview.body}`);
    }
  });

  test('DELETE /v1/voices/{id}: 403 without the scope, 404 for another key, 200 for the owner and for an admin key', async () => {
    const remove = (caller: Caller, id: string) => t.app.inject({ method: 'DELETE', url: `/v1/voices/${id}`, headers: as(caller) });
    assert.equal((await remove('noVoicesScope', voiceId)).statusCode, 403);
    assertHidden(await remove('other', voiceId), await remove('other', missingId));
    assert.equal((await routes['GET /v1/voices/{id}']!('owner', voiceId)).statusCode, 200, 'still there');
    assert.equal((await remove('owner', voiceId)).statusCode, 200);
    const second = await create(keys.owner);
    assert.equal((await remove('admin', second)).statusCode, 200);
    assert.equal((await routes['GET /v1/voices/{id}']!('admin', second)).statusCode, 404);
  });
});

/** Live transcription over the realtime socket: a real server, a real WebSocket client, eval speech at real-time pace. */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import alawmulaw from 'alawmulaw';
import { RealtimeClient, toPcm16 } from '../../bench/lib/realtime-client.js';
import { errorRate } from '../../bench/lib/wer.js';
import { decodeFile } from '../../src/audio/decode.js';
import { buildTestApp, evalDir, listen, multipartBody, type TestApp } from '../helpers/app.js';

const clips = [
  { file: 'asr/pv_leopard/test.wav', text: 'Mr. Quilter is the apostle of the middle classes and we are glad to welcome his gospel.' },
  { file: 'asr/deepspeech/arctic_a0024.wav', text: 'It was my reports from the north which chiefly induced people to buy.' },
];
const completedType = 'conversation.item.input_audio_transcription.completed';
const deltaType = 'conversation.item.input_audio_transcription.delta';

async function pcm16(file: string, sampleRate: number): Promise<Buffer> {
  return toPcm16((await decodeFile(path.join(evalDir, file), { sampleRate, channels: 1 })).samples);
}

const silence = (seconds: number, sampleRate: number): Buffer => Buffer.alloc(Math.round(seconds * sampleRate) * 2);

describe('realtime transcription socket', () => {
  let t: TestApp;
  let url: string;
  before(async () => {
    t = await buildTestApp();
    url = `ws://${await listen(t)}/v1/realtime?intent=transcription`;
  });
  after(async () => t.close());

  const connect = async (options: { key?: string; protocols?: string[] } = { key: t.key }): Promise<RealtimeClient> => {
    const client = await RealtimeClient.connect(url, options);
    await client.waitFor('transcription_session.created');
    return client;
  };

  test('server VAD: two utterances at real-time pace give partial deltas, then final text close to the file path, with word times', async () => {
    const client = await connect();
    client.send({
      type: 'transcription_session.update',
      session: {
        input_audio_transcription: { language: 'en' },
        turn_detection: { type: 'server_vad', silence_duration_ms: 500 },
        include: ['item.input_audio_transcription.logprobs'],
      },
    });
    const updated = await client.waitFor('transcription_session.updated');
    assert.deepEqual((updated.session as { turn_detection: unknown }).turn_detection, {
      type: 'server_vad',
      threshold: 0.5,
      prefix_padding_ms: 300,
      silence_duration_ms: 500,
    });
    const audio = Buffer.concat([
      silence(0.5, 24000),
      await pcm16(clips[0]!.file, 24000),
      silence(1.5, 24000),
      await pcm16(clips[1]!.file, 24000),
      silence(1.5, 24000),
    ]);
    await client.streamPcm16(audio, { sampleRate: 24000, pieceMs: 100 });
    await client.waitFor(completedType, {
      where: (e) => e.item_id === client.events.filter((x) => x.type === 'input_audio_buffer.committed')[1]?.item_id,
      timeoutMs: 60_000,
    });

    const started = client.events.filter((e) => e.type === 'input_audio_buffer.speech_started');
    const committed = client.events.filter((e) => e.type === 'input_audio_buffer.committed');
    const completed = client.events.filter((e) => e.type === completedType);
    assert.equal(started.length, 2, client.events.map((e) => e.type).join(' '));
    assert.equal(committed.length, 2);
    assert.equal(committed[1]!.previous_item_id, committed[0]!.item_id);
    assert.deepEqual(
      completed.map((e) => e.item_id),
      committed.map((e) => e.item_id),
    );
    // Partial text arrives while the first utterance is still being spoken.
    const firstDelta = client.events.find(
      (e) => e.type === deltaType && e.item_id === committed[0]!.item_id && (e.transcript as string).length > 0,
    );
    assert.ok(firstDelta && firstDelta.receivedAtMs < completed[0]!.receivedAtMs, 'a delta before completion');

    for (const [i, clip] of clips.entries()) {
      const event = completed[i]!;
      const live = errorRate(clip.text, event.transcript as string, 'en').rate;
      const filePath = await transcribeFile(clip.file);
      assert.ok(live <= errorRate(clip.text, filePath, 'en').rate + 0.1, `live "${event.transcript}" vs file "${filePath}"`);
      const words = event.words as Array<{ word: string; start: number; end: number; confidence: number }>;
      assert.ok(words.length >= 8);
      for (let w = 1; w < words.length; w++) assert.ok(words[w]!.start >= words[w - 1]!.start, 'word times are monotone');
      assert.ok(
        words[0]!.start >= (event.audio_start_ms as number) / 1000 - 0.01 &&
          words.at(-1)!.end <= (event.audio_end_ms as number) / 1000 + 0.01,
      );
      assert.equal((event.logprobs as unknown[]).length, words.length);
    }
    // The second utterance starts about 8 s into the session (0.5 + 5.9 + 1.5 s).
    assert.ok(Math.abs((completed[1]!.words as Array<{ start: number }>)[0]!.start - 7.9) < 0.6);
    await client.close();
  });

  const transcribeFile = async (file: string): Promise<string> => {
    const { body, contentType } = multipartBody(
      { language: 'en' },
      { audio: { filename: 'a.wav', content: await readFile(path.join(evalDir, file)) } },
    );
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcribe',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': contentType },
      payload: body,
    });
    return (response.json() as { text: string }).text;
  };

  test('manual commits (turn_detection null) in G.711 mu-law: committed and completed per commit; an empty commit is an error the session survives', async () => {
    const client = await connect();
    client.send({
      type: 'transcription_session.update',
      session: { input_audio_format: 'g711_ulaw', turn_detection: null, input_audio_transcription: { language: 'en' } },
    });
    await client.waitFor('transcription_session.updated');
    client.send({ type: 'input_audio_buffer.commit', event_id: 'evt_empty' });
    const error = await client.waitFor('error');
    assert.equal((error.error as { event_id: string }).event_id, 'evt_empty');
    const samples = (await decodeFile(path.join(evalDir, clips[1]!.file), { sampleRate: 8000, channels: 1 })).samples;
    const ulaw = Buffer.from(alawmulaw.mulaw.encode(Int16Array.from(samples, (s) => Math.round(s * 32767))));
    for (let offset = 0; offset < ulaw.length; offset += 1600)
      client.send({ type: 'input_audio_buffer.append', audio: ulaw.subarray(offset, offset + 1600).toString('base64') });
    client.send({ type: 'input_audio_buffer.commit' });
    const completed = await client.waitFor(completedType, { timeoutMs: 60_000 });
    assert.ok(errorRate(clips[1]!.text, completed.transcript as string, 'en').rate <= 0.2, completed.transcript as string);
    assert.equal(client.events.filter((e) => e.type === 'input_audio_buffer.speech_started').length, 0, 'no VAD events in manual mode');
    await client.close();
  });

  test('diarize: each completed turn carries a speaker label, the same one when the same speaker speaks again', async () => {
    const client = await connect();
    client.send({
      type: 'transcription_session.update',
      session: { turn_detection: null, input_audio_transcription: { language: 'en' }, diarize: true },
    });
    const updated = await client.waitFor('transcription_session.updated');
    assert.equal((updated.session as { diarize: boolean }).diarize, true);
    const turns = ['3080-5032-0001', '2033-164914-0001', '3080-5032-0004', '2033-164914-0003'];
    for (const turn of turns) {
      await client.streamPcm16(await pcm16(`vc/resemblyzer_librispeech/${turn}.wav`, 24000), { sampleRate: 24000, realTime: false });
      client.send({ type: 'input_audio_buffer.commit' });
    }
    await client.waitFor(completedType, {
      where: () => client.events.filter((e) => e.type === completedType).length === turns.length,
      timeoutMs: 120_000,
    });
    const speakers = client.events.filter((e) => e.type === completedType).map((e) => e.speaker);
    assert.deepEqual(speakers, ['SPEAKER_1', 'SPEAKER_2', 'SPEAKER_1', 'SPEAKER_2']);
    await client.close();
  });

  test('Chinese comes back in the script the language tag asks for, as from the file path (simplified for zh)', async () => {
    for (const [language, pattern] of [
      ['zh', /换一首歌/],
      ['zh-TW', /換一首歌/],
    ] as const) {
      const client = await connect();
      client.send({ type: 'transcription_session.update', session: { turn_detection: null, input_audio_transcription: { language } } });
      await client.waitFor('transcription_session.updated');
      await client.streamPcm16(await pcm16('asr/firered/IT0011W0001.wav', 24000), { sampleRate: 24000, realTime: false });
      client.send({ type: 'input_audio_buffer.commit' });
      const completed = await client.waitFor(completedType, { timeoutMs: 60_000 });
      assert.match(completed.transcript as string, pattern);
      await client.close();
    }
  });

  test('binary messages are audio in the session format; clear drops what is not committed', async () => {
    const client = await connect();
    client.send({ type: 'transcription_session.update', session: { turn_detection: null, input_audio_transcription: { language: 'en' } } });
    await client.waitFor('transcription_session.updated');
    await client.streamPcm16(await pcm16(clips[0]!.file, 24000), { sampleRate: 24000, realTime: false, binary: true });
    client.send({ type: 'input_audio_buffer.clear' });
    await client.waitFor('input_audio_buffer.cleared');
    await client.streamPcm16(await pcm16(clips[1]!.file, 24000), { sampleRate: 24000, realTime: false, binary: true });
    client.send({ type: 'input_audio_buffer.commit' });
    const completed = await client.waitFor(completedType, { timeoutMs: 60_000 });
    assert.match(completed.transcript as string, /reports from the north/i);
    assert.doesNotMatch(completed.transcript as string, /Quilter/i);
    await client.close();
  });

  test('malformed JSON, unknown events, invalid fields and bad audio each get an error event; the session goes on', async () => {
    const client = await connect();
    const errorsBefore = (): number => client.events.filter((e) => e.type === 'error').length;
    const expectError = async (
      send: () => void,
      check: (error: { code: string; param: string | null; message: string }) => void,
    ): Promise<void> => {
      const count = errorsBefore();
      send();
      await client.waitFor('error', { where: () => errorsBefore() > count });
      check(client.events.filter((e) => e.type === 'error')[count]!.error as { code: string; param: string | null; message: string });
    };
    await expectError(
      () => client.socket.send('{not json'),
      (e) => assert.match(e.message, /not valid JSON/),
    );
    await expectError(
      () => client.send({ type: 'response.create' }),
      (e) => assert.equal(e.param, 'type'),
    );
    await expectError(
      () => client.send({ type: 'transcription_session.update', session: { turn_detection: { type: 'server_vad', threshold: 5 } } }),
      (e) => assert.equal(e.param, 'session.turn_detection.threshold'),
    );
    await expectError(
      () => client.send({ type: 'transcription_session.update', session: { input_audio_format: 'flac' } }),
      (e) => assert.equal(e.param, 'session.input_audio_format'),
    );
    await expectError(
      () => client.send({ type: 'transcription_session.update', session: { input_audio_transcription: { language: 'xx' } } }),
      (e) => assert.equal(e.code, 'unsupported_value'),
    );
    await expectError(
      () => client.send({ type: 'input_audio_buffer.append', audio: 'this is not base64!' }),
      (e) => assert.equal(e.param, 'audio'),
    );
    client.send({ type: 'transcription_session.update', session: { input_audio_transcription: { language: 'de' } } });
    const updated = await client.waitFor('transcription_session.updated');
    assert.equal((updated.session as { input_audio_transcription: { language: string } }).input_audio_transcription.language, 'de');
    await client.close();
  });

  test('keys: a bad key is refused at the upgrade; the subprotocol form and client secrets work; a client secret opens sockets only', async () => {
    await assert.rejects(
      RealtimeClient.connect(url, { key: `vx_${'A'.repeat(43)}` }),
      (error: { status: number; body: string }) => error.status === 401 && JSON.parse(error.body).error.code === 'unauthorized',
    );
    await assert.rejects(RealtimeClient.connect(url, {}), (error: { status: number }) => error.status === 401);
    const noScope = await t.keyWith(['tts']);
    await assert.rejects(RealtimeClient.connect(url, { key: noScope }), (error: { status: number }) => error.status === 403);

    const viaProtocol = await connect({ protocols: ['realtime', `openai-insecure-api-key.${t.key}`] });
    assert.equal(viaProtocol.socket.protocol, 'realtime');
    await viaProtocol.close();

    const minted = await t.app.inject({
      method: 'POST',
      url: '/v1/realtime/client_secrets',
      headers: { authorization: `Bearer ${t.key}` },
      payload: { expires_after: { anchor: 'created_at', seconds: 60 } },
    });
    assert.equal(minted.statusCode, 200, minted.body);
    const secret = minted.json() as { value: string; expires_at: number; scopes: string[] };
    assert.match(secret.value, /^ek_/);
    assert.ok(secret.expires_at > Date.now() / 1000 + 50);
    const viaSecret = await connect({ protocols: ['realtime', `openai-insecure-api-key.${secret.value}`] });
    await viaSecret.close();
    const onHttp = await t.app.inject({ method: 'GET', url: '/v1/voices', headers: { authorization: `Bearer ${secret.value}` } });
    assert.equal(onHttp.statusCode, 401);
    await assert.rejects(
      RealtimeClient.connect(url, { key: `${secret.value.slice(0, -2)}xx` }),
      (error: { status: number }) => error.status === 401,
    );

    const plain = await t.app.inject({
      method: 'GET',
      url: '/v1/realtime?intent=transcription',
      headers: { authorization: `Bearer ${t.key}` },
    });
    assert.equal(plain.statusCode, 426);
    await assert.rejects(
      RealtimeClient.connect(url.replace('intent=transcription', 'model=gpt-4o-realtime'), { key: t.key }),
      (error: { status: number }) => error.status === 422,
    );
  });

  test('capabilities name the realtime sockets', async () => {
    const capabilities = (await t.app.inject({ method: 'GET', url: '/v1/capabilities' })).json() as {
      realtime: { available: boolean; transcription: { path: string; input_audio_formats: string[] }; speech: { formats: string[] } };
    };
    assert.equal(capabilities.realtime.available, true);
    assert.equal(capabilities.realtime.transcription.path, '/v1/realtime?intent=transcription');
    assert.deepEqual(capabilities.realtime.transcription.input_audio_formats, ['pcm16', 'g711_ulaw', 'g711_alaw']);
    assert.deepEqual(capabilities.realtime.speech.formats, ['pcm16', 'mp3', 'opus']);
  });

  test('disconnecting mid-utterance frees the engine slot at once', async () => {
    const client = await connect();
    client.send({ type: 'transcription_session.update', session: { turn_detection: null, input_audio_transcription: { language: 'en' } } });
    await client.waitFor('transcription_session.updated');
    await client.streamPcm16(await pcm16('asr/whisper_cpp/jfk.wav', 24000), { sampleRate: 24000, realTime: false });
    client.send({ type: 'input_audio_buffer.commit' });
    await client.waitFor('input_audio_buffer.committed');
    await client.close();
    const deadline = Date.now() + 5000;
    let metrics = '';
    for (; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      metrics = (await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${t.key}` } })).body;
      if (
        /voxd_jobs_running\{operation="transcribe",lane="short"\} 0/.test(metrics) &&
        /voxd_realtime_sessions\{kind="transcription"\} 0/.test(metrics)
      )
        break;
    }
    assert.match(metrics, /voxd_jobs_running\{operation="transcribe",lane="short"\} 0/);
    assert.match(metrics, /voxd_realtime_sessions\{kind="transcription"\} 0/);
  });
});

describe('realtime limits', () => {
  let t: TestApp;
  let url: string;
  before(async () => {
    t = await buildTestApp({ VOXD_REALTIME_IDLE_SECONDS: '2', VOXD_REALTIME_SESSIONS_PER_KEY: '1', VOXD_REALTIME_MAX_MESSAGE_MB: '1' });
    url = `ws://${await listen(t)}/v1/realtime?intent=transcription`;
  });
  after(async () => t.close());

  test('a second session of one key is closed with 4429; an idle session with 4408', async () => {
    const key = await t.keyWith(['transcribe']);
    const first = await RealtimeClient.connect(url, { key });
    await first.waitFor('transcription_session.created');
    const second = await RealtimeClient.connect(url, { key });
    await second.closed;
    assert.equal(second.closeCode, 4429);
    assert.equal((second.events.find((e) => e.type === 'error')!.error as { code: string }).code, 'rate_limited');
    await first.closed;
    assert.equal(first.closeCode, 4408, first.closeReason);
    assert.match(first.closeReason, /idle/);
  });

  test('a message over the size cap gets an error and is dropped; far over it closes the socket (1009)', async () => {
    const client = await RealtimeClient.connect(url, { key: await t.keyWith(['transcribe']) });
    await client.waitFor('transcription_session.created');
    client.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(900 * 1024).toString('base64') });
    const error = await client.waitFor('error');
    assert.equal((error.error as { code: string }).code, 'payload_too_large');
    client.send({ type: 'transcription_session.update', session: { include: [] } });
    await client.waitFor('transcription_session.updated');
    client.socket.send(Buffer.alloc(3 * 1024 * 1024));
    await client.closed;
    assert.equal(client.closeCode, 1009);
  });
});

test('an API-only node refuses realtime sockets with 501 (sessions run where the engines are)', async () => {
  const api = await buildTestApp({ VOXD_ROLE: 'api' });
  try {
    for (const url of ['/v1/realtime?intent=transcription', '/v1/audio/tts/stream']) {
      const response = await api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${api.key}` } });
      assert.equal(response.statusCode, 501, response.body);
      assert.match(response.json().error.message, /role all/);
    }
  } finally {
    await api.close();
  }
});

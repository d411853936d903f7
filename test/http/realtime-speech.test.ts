/** Streaming speech over a socket: text in pieces as an LLM writes it, audio frames out, checked by transcribing them back. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RealtimeClient } from '../../bench/lib/realtime-client.js';
import { errorRate } from '../../bench/lib/wer.js';
import { encodeWaveform } from '../../src/audio/encode.js';
import { buildTestApp, listen, multipartBody, type TestApp } from '../helpers/app.js';
import { longestSilence } from '../helpers/silence.js';

const text =
  'Good morning to everyone listening today, this is a streaming test. The words arrive in small pieces, just like a language model writes them. Can you hear every one of them?';

/** Words with their trailing space, as token-sized pieces. */
const pieces = (value: string): string[] => value.match(/\S+\s*/g) ?? [];

/** Streamed 16-bit PCM as a WAV file the transcription route can read. */
async function wav(pcm: Buffer, sampleRate: number): Promise<Buffer> {
  const samples = new Float32Array(pcm.length / 2).map((_, i) => pcm.readInt16LE(i * 2) / 32768);
  return encodeWaveform({ samples, sampleRate, channels: 1 }, { format: 'wav' });
}

describe('streaming speech socket', () => {
  let t: TestApp;
  let url: string;
  before(async () => {
    t = await buildTestApp();
    url = `ws://${await listen(t)}/v1/audio/tts/stream`;
  });
  after(async () => t.close());

  const transcribe = async (audio: Buffer, filename: string): Promise<string> => {
    const { body, contentType } = multipartBody({ language: 'en' }, { audio: { filename, content: audio } });
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcribe',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': contentType },
      payload: body,
    });
    assert.equal(response.statusCode, 200, response.body);
    return (response.json() as { text: string }).text;
  };

  test('text fed word by word comes back as speech with the same words; alignment covers the audio; close ends with done', async () => {
    const client = await RealtimeClient.connect(url, { key: t.key });
    client.send({ type: 'start', voice_id: 'af_heart', format: 'pcm16', sample_rate: 16000 });
    const started = await client.waitFor('started');
    assert.equal((started.session as { sample_rate: number }).sample_rate, 16000);
    for (const piece of pieces(text)) {
      client.send({ type: 'text', text: piece });
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    client.send({ type: 'close' });
    await client.closed;
    assert.equal(client.closeCode, 1000);
    const done = client.events.find((e) => e.type === 'done')!;
    const pcm = Buffer.concat(client.binary.map((b) => b.data));
    assert.ok(Math.abs((done.audio_seconds as number) - pcm.length / 2 / 16000) < 0.05);
    // Audio started before the whole text was sent: the first clause is spoken on its own.
    const alignments = client.events.filter((e) => e.type === 'alignment');
    assert.ok(alignments.length >= 2, JSON.stringify(alignments));
    assert.equal(alignments[0]!.text, 'Good morning to everyone listening today,');
    for (let i = 1; i < alignments.length; i++) assert.equal(alignments[i]!.audio_start, alignments[i - 1]!.audio_end);
    assert.equal(alignments.map((a) => a.text).join(' '), text);
    const heard = await transcribe(await wav(pcm, 16000), 'speech.wav');
    assert.ok(errorRate(text, heard, 'en').rate <= 0.1, heard);
  });

  test('a short opening clause is spoken before the rest of its sentence has arrived, and is heard with it', async () => {
    const client = await RealtimeClient.connect(url, { key: t.key });
    client.send({ type: 'start', voice_id: 'am_puck', format: 'pcm16', sample_rate: 16000 });
    await client.waitFor('started');
    client.send({ type: 'text', text: 'Sure, ' });
    client.send({ type: 'text', text: 'I' });
    const opening = await client.waitFor('alignment', { timeoutMs: 30_000 });
    assert.equal(opening.text, 'Sure,');
    assert.ok(client.binary.length > 0);
    const rest = ' can help with that. The train leaves from the last platform.';
    for (const piece of pieces(rest)) client.send({ type: 'text', text: piece });
    client.send({ type: 'close' });
    await client.closed;
    const heard = await transcribe(await wav(Buffer.concat(client.binary.map((b) => b.data)), 16000), 'speech.wav');
    assert.ok(errorRate(`Sure, I${rest}`, heard, 'en').rate <= 0.1, heard);
  });

  test('mp3 output streams as frames that decode to the spoken text', async () => {
    const client = await RealtimeClient.connect(url, { key: t.key });
    client.send({ type: 'start', voice_id: 'am_michael', format: 'mp3' });
    await client.waitFor('started');
    client.send({ type: 'text', text: 'The weather is lovely today.' });
    client.send({ type: 'close' });
    await client.closed;
    const mp3 = Buffer.concat(client.binary.map((b) => b.data));
    assert.ok(mp3.length > 1000);
    assert.match(await transcribe(mp3, 'speech.mp3'), /weather is lovely today/i);
  });

  test('flush speaks an unfinished sentence; cancel stops the audio at once and the session goes on', async () => {
    const client = await RealtimeClient.connect(url, { key: t.key });
    client.send({ type: 'start', voice_id: 'af_heart' });
    await client.waitFor('started');
    client.send({ type: 'text', text: 'No full stop here' });
    client.send({ type: 'flush' });
    const flushed = await client.waitFor('flushed', { timeoutMs: 30_000 });
    assert.ok((flushed.audio_seconds as number) > 0.5);

    client.send({ type: 'text', text: `${'This long passage keeps the engine busy for a while, sentence after sentence. '.repeat(8)}` });
    await client.waitForBinary(client.binary.length, 30_000);
    const cancelSentAt = performance.now();
    client.send({ type: 'cancel' });
    const cancelled = await client.waitFor('cancelled', { timeoutMs: 10_000 });
    const framesAfter = client.binary.filter((b) => b.receivedAtMs > cancelSentAt + 200);
    assert.equal(framesAfter.length, 0, 'no audio more than 200 ms after cancel');
    assert.ok((cancelled.audio_seconds as number) < 30);

    client.send({ type: 'text', text: 'Still here.' });
    client.send({ type: 'close' });
    await client.closed;
    assert.equal(client.closeCode, 1000);
    assert.ok(client.events.some((e) => e.type === 'alignment' && e.text === 'Still here.'));
  });

  test('SSML: a document sent over two messages is spoken whole (its break measured, its <sub> heard as the alias); malformed SSML and markup outside a document are error events, and the session goes on (issue 39)', async () => {
    const client = await RealtimeClient.connect(url, { key: t.key });
    client.send({ type: 'start', voice_id: 'af_heart', format: 'pcm16', sample_rate: 16000 });
    await client.waitFor('started');
    const document =
      '<speak>I work at the <sub alias="World Wide Web Consortium">W3C</sub>.<break time="1.5s"/>See you at the meeting.</speak>';
    const split = document.indexOf('<break');
    client.send({ type: 'text', text: document.slice(0, split) });
    client.send({ type: 'text', text: `${document.slice(split)} ` });
    client.send({ type: 'text', text: '<speak>Please <shout>now</shout>.</speak>' });
    client.send({ type: 'text', text: 'Then wait <break time="1s"/> a moment. ' });
    const errorEvents = () => client.events.filter((e) => e.type === 'error');
    await client.waitFor('error', { where: () => errorEvents().length === 2, timeoutMs: 60_000 });
    client.send({ type: 'text', text: 'Goodbye for now.' });
    client.send({ type: 'close' });
    await client.closed;
    assert.equal(client.closeCode, 1000, 'the session goes on after its errors and ends cleanly');
    const errors = errorEvents().map((e) => e.error as { code: string; param: string; message: string });
    assert.equal(errors.length, 2, JSON.stringify(errors));
    assert.equal(errors[0]!.code, 'invalid_request');
    assert.equal(errors[0]!.param, 'text');
    assert.match(errors[0]!.message, /unknown element <shout> \(line 1, column \d+\)/);
    assert.match(errors[1]!.message, /outside a <speak> document: '<break time="1s"\/>' at character 11/);
    const alignments = client.events.filter((e) => e.type === 'alignment');
    assert.deepEqual(
      alignments.map((a) => a.text),
      [document, 'Goodbye for now.'],
    );
    const pcm = Buffer.concat(client.binary.map((b) => b.data));
    const samples = new Float32Array(pcm.length / 2).map((_, i) => pcm.readInt16LE(i * 2) / 32768);
    const [start, end] = [alignments[0]!.audio_start as number, alignments[0]!.audio_end as number].map((s) => Math.round(s * 16000));
    const silence = longestSilence({ samples: samples.subarray(start, end), sampleRate: 16000, channels: 1 });
    assert.ok(Math.abs(silence.seconds - 1.5) <= 0.2, `the break measured ${silence.seconds} s`);
    const heard = (await transcribe(await wav(pcm, 16000), 'speech.wav')).toLowerCase();
    assert.match(heard, /world ?wide web consortium/, heard);
    assert.match(heard, /goodbye/, heard);
    assert.doesNotMatch(heard, /w3c|shout|please|break|wait/, heard);
  });

  test('protocol errors: text before start, an unknown voice, binary messages, a second start; a bad key is refused at the upgrade', async () => {
    await assert.rejects(RealtimeClient.connect(url, { key: `vx_${'B'.repeat(43)}` }), (error: { status: number }) => error.status === 401);
    await assert.rejects(
      RealtimeClient.connect(url, { key: await t.keyWith(['transcribe']) }),
      (error: { status: number }) => error.status === 403,
    );
    const client = await RealtimeClient.connect(url, { key: t.key });
    const errorCount = (): number => client.events.filter((e) => e.type === 'error').length;
    const nextError = async (send: () => void): Promise<{ code: string; param: string | null }> => {
      const count = errorCount();
      send();
      await client.waitFor('error', { where: () => errorCount() > count });
      return client.events.filter((e) => e.type === 'error')[count]!.error as { code: string; param: string | null };
    };
    assert.equal((await nextError(() => client.send({ type: 'text', text: 'hello' }))).param, 'type');
    assert.equal((await nextError(() => client.send({ type: 'start', voice_id: 'no_such_voice' }))).code, 'not_found');
    assert.equal((await nextError(() => client.socket.send(Buffer.from([1, 2, 3])))).code, 'invalid_request');
    client.send({ type: 'start', voice_id: 'af_heart', format: 'opus' });
    await client.waitFor('started');
    assert.equal((await nextError(() => client.send({ type: 'start', voice_id: 'af_heart' }))).param, 'type');
    assert.equal((await nextError(() => client.send({ type: 'start', voice_id: 'af_heart', sample_rate: 3 }))).param, 'sample_rate');
    await client.close();
  });
});

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { encodeWaveform } from '../../src/audio/encode.js';
import { buildTestApp, evalDir, makeTempDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const clip = (name: string) => readFileSync(path.join(evalDir, 'vc/resemblyzer_librispeech', name));

function form(fields: Record<string, string>, files: Array<{ filename: string; content: Buffer }>) {
  // Repeated `files` parts, as browsers and SDKs send them.
  const parts = multipartBody(fields, {});
  const boundary = parts.contentType.split('boundary=')[1]!;
  const fileParts = files.map((f) =>
    Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${f.filename}"\r\nContent-Type: audio/wav\r\n\r\n`,
      ),
      f.content,
      Buffer.from('\r\n'),
    ]),
  );
  const head = parts.body.subarray(0, parts.body.length - `--${boundary}--\r\n`.length);
  return { body: Buffer.concat([head, ...fileParts, Buffer.from(`--${boundary}--\r\n`)]), contentType: parts.contentType };
}

describe('voices API', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    await Promise.all([modelFile('silero-vad', 'silero_vad.onnx'), modelFile('resemblyzer-ge2e', 'ge2e.onnx')]);
  });
  after(async () => t.close());

  const post = (body: ReturnType<typeof form>, key = t.key) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/voices',
      headers: { authorization: `Bearer ${key}`, 'content-type': body.contentType },
      payload: body.body,
    });

  test('create from two clips, list, get, patch, delete leaves no file behind', async () => {
    const created = await post(
      form({ name: 'Reader 3080', consent: 'true', language: 'en', labels: '{"accent":"american"}' }, [
        { filename: 'a.wav', content: clip('3080-5032-0001.wav') },
        { filename: 'b.wav', content: clip('3080-5032-0004.wav') },
      ]),
    );
    assert.equal(created.statusCode, 201, created.body);
    const profile = created.json();
    assert.match(profile.voice_id, /^voice_/);
    assert.equal(profile.type, 'cloned');
    assert.deepEqual(profile.languages, ['en']);
    assert.deepEqual(profile.labels, { accent: 'american' });
    assert.equal(profile.gender_estimate, 'female');
    assert.ok(profile.reference_seconds > 8 && profile.reference_seconds < 7.84 + 5.93, `speech only: ${profile.reference_seconds}`);

    // t.key made the voice; a key without the `voices` scope may read (its own voices) but not write.
    const auth = { authorization: `Bearer ${t.key}` };
    const list = (await t.app.inject({ method: 'GET', url: '/v1/voices?type=cloned', headers: auth })).json();
    assert.ok(list.voices.some((v: { voice_id: string }) => v.voice_id === profile.voice_id));
    const filtered = (await t.app.inject({ method: 'GET', url: '/v1/voices?language=de', headers: auth })).json();
    assert.ok(!filtered.voices.some((v: { voice_id: string }) => v.voice_id === profile.voice_id));
    const got = await t.app.inject({ method: 'GET', url: `/v1/voices/${profile.voice_id}`, headers: auth });
    assert.equal(got.json().name, 'Reader 3080');

    const readOnly = await t.app.inject({
      method: 'PATCH',
      url: `/v1/voices/${profile.voice_id}`,
      headers: { authorization: `Bearer ${await t.keyWith(['tts'])}` },
      payload: { name: 'x' },
    });
    assert.equal(readOnly.statusCode, 403);
    const patched = await t.app.inject({
      method: 'PATCH',
      url: `/v1/voices/${profile.voice_id}`,
      headers: { authorization: `Bearer ${t.key}` },
      payload: { name: 'Narrator', labels: { use: 'audiobook' } },
    });
    assert.equal(patched.statusCode, 200);
    assert.equal(patched.json().name, 'Narrator');
    assert.deepEqual(patched.json().labels, { use: 'audiobook' });

    const voiceDir = path.join(t.config.dataDir, 'blobs/voices', profile.voice_id);
    assert.ok(readdirSync(voiceDir).length >= 2, 'processed clips are stored');
    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/v1/voices/${profile.voice_id}`,
      headers: { authorization: `Bearer ${t.key}` },
    });
    assert.equal(deleted.statusCode, 200);
    assert.equal(existsSync(voiceDir), false);
    assert.equal((await t.app.inject({ method: 'GET', url: `/v1/voices/${profile.voice_id}`, headers: auth })).statusCode, 404);
  });

  test("built-in voices are listed best first (Kokoro's grades); capabilities name a default voice per language", async () => {
    const auth = { authorization: `Bearer ${t.key}` };
    const ids = (
      (await t.app.inject({ method: 'GET', url: '/v1/voices?type=builtin', headers: auth })).json().voices as Array<{ voice_id: string }>
    ).map((v) => v.voice_id);
    assert.deepEqual(ids.slice(0, 2), ['af_heart', 'af_bella']);
    assert.ok(ids.indexOf('af_nicole') < ids.indexOf('af_alloy') && ids.indexOf('af_alloy') < ids.indexOf('am_adam'), 'graded order');
    const english = (
      (await t.app.inject({ method: 'GET', url: '/v1/voices?language=en-us', headers: auth })).json().voices as Array<{ voice_id: string }>
    ).map((v) => v.voice_id);
    assert.equal(english[0], 'af_heart');
    const defaults = (await t.app.inject({ method: 'GET', url: '/v1/capabilities' })).json().tts.default_voices as Record<string, string>;
    assert.equal(defaults['en-us'], 'af_heart');
    assert.equal(defaults['en-gb'], 'bf_emma');
    assert.equal(defaults.fr, 'ff_siwis');
    assert.equal(defaults.de, 'espeak-de');
    for (const voice of Object.values(defaults)) assert.ok(ids.includes(voice), `${voice} is a listed voice`);
  });

  test('consent missing or false -> 400', async () => {
    for (const fields of [{ name: 'x' }, { name: 'x', consent: 'false' }] as Array<Record<string, string>>) {
      const r = await post(form(fields, [{ filename: 'a.wav', content: clip('3080-5032-0001.wav') }]));
      assert.equal(r.statusCode, 400);
      assert.equal(r.json().error.param, 'consent');
    }
  });

  test('silent, too short and clipped clips -> 422 with the reason; nothing is kept', async () => {
    const silent = await encodeWaveform({ samples: new Float32Array(16000 * 5), sampleRate: 16000, channels: 1 }, { format: 'wav' });
    const r = await post(form({ name: 'x', consent: 'true' }, [{ filename: 'silence.wav', content: silent }]));
    assert.equal(r.statusCode, 422);
    assert.match(r.json().error.message, /no speech/);
    // A steady tone sits at its peak often enough to look clipped: the reason given is still that it is not speech.
    const tone = await encodeWaveform(
      {
        samples: Float32Array.from({ length: 16000 * 4 }, (_, i) => 0.5 * Math.sin((2 * Math.PI * 440 * i) / 16000)),
        sampleRate: 16000,
        channels: 1,
      },
      { format: 'wav' },
    );
    const toneResponse = await post(form({ name: 'x', consent: 'true' }, [{ filename: 'tone.wav', content: tone }]));
    assert.equal(toneResponse.statusCode, 422);
    assert.match(toneResponse.json().error.message, /no speech/);
    // One sample decodes to nothing at 16 kHz: 415 naming the field the file came in.
    const oneSample = await encodeWaveform({ samples: new Float32Array([0.5]), sampleRate: 8000, channels: 1 }, { format: 'wav' });
    const tiny = await post(form({ name: 'x', consent: 'true' }, [{ filename: 'tiny.wav', content: oneSample }]));
    assert.equal(tiny.statusCode, 415);
    assert.equal(tiny.json().error.param, 'files');

    const { decodeFile } = await import('../../src/audio/decode.js');
    const speech = await decodeFile(path.join(evalDir, 'vc/resemblyzer_librispeech/3080-5032-0001.wav'));
    const short = await encodeWaveform({ ...speech, samples: speech.samples.subarray(0, speech.sampleRate * 2) }, { format: 'wav' });
    const r2 = await post(form({ name: 'x', consent: 'true' }, [{ filename: 'short.wav', content: short }]));
    assert.equal(r2.statusCode, 422);
    assert.match(r2.json().error.message, /at least 3 s/);

    const clipped = await encodeWaveform(
      { ...speech, samples: speech.samples.map((v) => Math.max(-1, Math.min(1, v * 30))) },
      { format: 'wav' },
    );
    const r3 = await post(form({ name: 'x', consent: 'true' }, [{ filename: 'loud.wav', content: clipped }]));
    assert.equal(r3.statusCode, 422);
    assert.match(r3.json().error.message, /clipped/);
    assert.equal(
      existsSync(path.join(t.config.dataDir, 'blobs/voices')) ? readdirSync(path.join(t.config.dataDir, 'blobs/voices')).length : 0,
      0,
    );
  });

  test('a clip with two speakers, or clips of different speakers -> 422', async () => {
    const conversation = readFileSync(path.join(evalDir, 'diar/pyannote/sample.wav'));
    const two = await post(form({ name: 'x', consent: 'true' }, [{ filename: 'talk.wav', content: conversation }]));
    assert.equal(two.statusCode, 422, two.body);
    assert.match(two.json().error.message, /more than one speaker/);
    const mixed = await post(
      form({ name: 'x', consent: 'true' }, [
        { filename: 'a.wav', content: clip('3080-5032-0001.wav') },
        { filename: 'b.wav', content: clip('1998-15444-0001.wav') },
      ]),
    );
    assert.equal(mixed.statusCode, 422, mixed.body);
    assert.match(mixed.json().error.message, /same speaker/);
    // Rejected after the clips were staged: nothing stays in scratch space either.
    assert.deepEqual(
      readdirSync(path.join(t.config.dataDir, 'tmp')).filter((name) => name.endsWith('-voice')),
      [],
    );
  });

  test('single-speaker clips the earlier GE2E window check took for two speakers are accepted (CAM++ check)', async () => {
    for (const file of ['vc/pv_eagle/speaker_1_utt_2.wav', 'asr/pv_leopard/test_es.wav']) {
      const created = await post(
        form({ name: 'one', consent: 'true' }, [{ filename: path.basename(file), content: readFileSync(path.join(evalDir, file)) }]),
      );
      assert.equal(created.statusCode, 201, `${file}: ${created.body}`);
    }
  });

  test('unknown voice -> 404; bad labels -> 400', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/v1/voices/voice_nope', headers: { authorization: `Bearer ${t.key}` } });
    assert.equal(r.statusCode, 404);
    const bad = await post(
      form({ name: 'x', consent: 'true', labels: '[1,2]' }, [{ filename: 'a.wav', content: clip('3080-5032-0001.wav') }]),
    );
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().error.param, 'labels');
  });
});

describe('voice files after a crash (kill -9 during creation or deletion)', () => {
  test('at the next start, profile files without a record and staged files are removed; a complete voice is untouched', async () => {
    const dataDir = makeTempDir('voices-crash');
    const voicesDir = path.join(dataDir, 'blobs/voices');
    const first = await buildTestApp({ VOXD_DATA_DIR: dataDir });
    await Promise.all([modelFile('silero-vad', 'silero_vad.onnx'), modelFile('resemblyzer-ge2e', 'ge2e.onnx')]);
    const body = form({ name: 'Kept', consent: 'true' }, [{ filename: 'a.wav', content: clip('3080-5032-0001.wav') }]);
    const created = await first.app.inject({
      method: 'POST',
      url: '/v1/voices',
      headers: { authorization: `Bearer ${first.key}`, 'content-type': body.contentType },
      payload: body.body,
    });
    const kept = created.json().voice_id as string;
    assert.equal(created.statusCode, 201, created.body);
    const keptFiles = readdirSync(path.join(voicesDir, kept)).sort();
    await first.close();
    // What a killed process leaves: a profile's files with no record (moved but not yet recorded, or a deletion cut
    // short), and files still being made in scratch space.
    mkdirSync(path.join(voicesDir, 'voice_orphan'));
    writeFileSync(path.join(voicesDir, 'voice_orphan/reference-1.flac'), clip('3080-5032-0004.wav'));
    mkdirSync(path.join(dataDir, 'tmp/staged-voice'));
    writeFileSync(path.join(dataDir, 'tmp/staged-voice/reference-1.flac'), clip('3080-5032-0004.wav'));

    const second = await buildTestApp({ VOXD_DATA_DIR: dataDir });
    try {
      // What the server does at start.
      await second.container.scratch.clear();
      assert.deepEqual(await second.container.voices.removeOrphans(), ['voices/voice_orphan']);
      assert.deepEqual(readdirSync(voicesDir), [kept]);
      assert.deepEqual(readdirSync(path.join(voicesDir, kept)).sort(), keptFiles);
      assert.deepEqual(readdirSync(path.join(dataDir, 'tmp')), []);
      const got = await second.app.inject({ method: 'GET', url: `/v1/voices/${kept}`, headers: { authorization: `Bearer ${second.key}` } });
      assert.equal(got.json().name, 'Kept');
    } finally {
      await second.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

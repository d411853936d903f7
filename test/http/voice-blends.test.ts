/**
 * Blended voices through the server: `af_bella*0.5+am_adam*0.5` speaks with the mix of the two Kokoro styles (its
 * speaker embedding lies between theirs), as does af_bella with a cloned voice made from eval recordings; a blend is
 * stored by name with POST /v1/voices `blend`; bad blends are refused naming the part, another key's cloned voice in a
 * blend is a 404, and a blend whose language Kokoro lacks a 422.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeFile } from '../../src/audio/decode.js';
import { averageEmbedding, cosineSimilarity, embeddingSampleRate } from '../../src/speakers/embedding.js';
import { buildTestApp, createVoice, evalDir, evalFile, makeTempDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const sentence = 'The quick brown fox jumps over the lazy dog near the river bank.';

describe('blended voices', () => {
  let t: TestApp;
  let keys: { owner: string; other: string };
  const as = (key: string) => ({ authorization: `Bearer ${key}` });
  const tts = (voiceId: string, text = sentence, key = keys.owner) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/audio/tts',
      headers: as(key),
      payload: { text, voice_id: voiceId, format: 'wav', sample_rate: embeddingSampleRate },
    });

  /** GE2E embeddings of the given voices saying the test text, each checked to answer 200 (and spoken by `engine`). */
  const spokenEmbeddings = async (voices: string[], label: string, engine?: string): Promise<Float32Array[]> => {
    const dir = makeTempDir(label);
    const encoder = await t.container.speakerEncoder.get();
    const embeddings: Float32Array[] = [];
    for (const voice of voices) {
      const r = await tts(voice);
      assert.equal(r.statusCode, 200, r.body);
      if (engine) assert.equal(r.headers['x-voxd-engine'], engine);
      const file = path.join(dir, `${embeddings.length}.wav`);
      writeFileSync(file, r.rawPayload);
      embeddings.push(await encoder.embedUtterance(await decodeFile(file, { sampleRate: embeddingSampleRate, channels: 1 })));
    }
    return embeddings;
  };

  before(async () => {
    await Promise.all(['kokoro-82m', 'kokoro-voices', 'misaki-lexicon', 'resemblyzer-ge2e', 'silero-vad'].map((id) => modelFile(id, '')));
    t = await buildTestApp();
    keys = { owner: await t.keyWith(['tts', 'voices']), other: await t.keyWith(['tts', 'voices']) };
  });
  after(async () => t.close());

  test('a 50/50 blend speaks between its two voices: closer to each than they are to each other', async (context) => {
    const embeddings = await spokenEmbeddings(['af_bella', 'am_adam', 'af_bella*0.5+am_adam*0.5'], 'blend', 'kokoro');
    const [bella, adam, blend] = embeddings as [Float32Array, Float32Array, Float32Array];
    const apart = cosineSimilarity(bella, adam);
    const toBella = cosineSimilarity(blend, bella);
    const toAdam = cosineSimilarity(blend, adam);
    context.diagnostic(JSON.stringify({ bellaAdam: apart, blendBella: toBella, blendAdam: toAdam }));
    assert.ok(toBella > apart && toAdam > apart, `blend-bella ${toBella}, blend-adam ${toAdam}, bella-adam ${apart}`);
  });

  test('a cloned voice blends: 50/50 with af_bella it speaks between them; a stored blend naming it is its owner’s; a language Kokoro lacks is a clear error', async (context) => {
    const clips = ['2033-164914-0001.wav', '2033-164914-0003.wav'].map((name) => evalFile(`vc/resemblyzer_librispeech/${name}`));
    const cloned = (await createVoice(t, { name: 'Reader 2033', language: 'en-us' }, clips, keys.owner)).voice_id;
    const embeddings = await spokenEmbeddings(['af_bella', cloned, `af_bella*0.5+${cloned}*0.5`], 'cloned-blend');
    const [bella, clone, blend] = embeddings as [Float32Array, Float32Array, Float32Array];
    const apart = cosineSimilarity(bella, clone);
    const toBella = cosineSimilarity(blend, bella);
    const toClone = cosineSimilarity(blend, clone);
    // The speaker's own recordings: the blend carries some of them, af_bella alone none.
    const encoder = await t.container.speakerEncoder.get();
    const recorded = averageEmbedding(
      await Promise.all(
        ['2033-164914-0001.wav', '2033-164914-0003.wav'].map(async (name) =>
          encoder.embedUtterance(
            await decodeFile(path.join(evalDir, 'vc/resemblyzer_librispeech', name), { sampleRate: embeddingSampleRate }),
          ),
        ),
      ),
    );
    const [bellaRecorded, blendRecorded] = [cosineSimilarity(bella, recorded), cosineSimilarity(blend, recorded)];
    context.diagnostic(JSON.stringify({ bellaClone: apart, blendBella: toBella, blendClone: toClone, bellaRecorded, blendRecorded }));
    assert.ok(toBella > apart && toClone > apart, `blend-bella ${toBella}, blend-clone ${toClone}, bella-clone ${apart}`);
    assert.ok(blendRecorded > bellaRecorded, `to the recordings: blend ${blendRecorded}, af_bella ${bellaRecorded}`);

    // The owner rule: another key's cloned voice is a 404 in a blend as anywhere, written as an id or stored.
    const foreign = await tts(`af_bella*0.5+${cloned}*0.5`, 'Hello.', keys.other);
    assert.equal(foreign.statusCode, 404, foreign.body);
    assert.match(foreign.json().error.message, new RegExp(cloned));
    const storeBlend = async (blend: string, key: string, fields: Record<string, string> = {}) => {
      const form = multipartBody({ name: 'Bella and the reader', blend, ...fields }, {});
      return t.app.inject({
        method: 'POST',
        url: '/v1/voices',
        headers: { ...as(key), 'content-type': form.contentType },
        payload: form.body,
      });
    };
    assert.equal((await storeBlend(`${cloned}*0.5+af_bella*0.5`, keys.other)).statusCode, 404);
    const stored = await storeBlend(`${cloned}*0.5+af_bella*0.5`, keys.owner);
    assert.equal(stored.statusCode, 201, stored.body);
    assert.deepEqual(stored.json().blend, [
      { voice_id: cloned, weight: 0.5 },
      { voice_id: 'af_bella', weight: 0.5 },
    ]);
    assert.deepEqual(stored.json().languages, ['en-us']);
    const storedId = stored.json().voice_id as string;
    const spoken = await tts(storedId, 'Hello there.');
    assert.equal(spoken.statusCode, 200, spoken.body);
    assert.equal(spoken.headers['x-voxd-engine'], 'kokoro');
    assert.match(String(spoken.headers['x-voxd-warnings']), new RegExp(`Cloned voice ${cloned} enters the blend as its mix`));
    assert.equal((await tts(storedId, 'Hello.', keys.other)).statusCode, 404);

    // A cloned voice of a language Kokoro has no voices for makes that the blend's language: a 422 saying what to do.
    const swahili = (
      await createVoice(t, { name: 'Reader 3005', language: 'sw' }, evalFile('vc/resemblyzer_librispeech/3005-163389-0001.wav'), keys.owner)
    ).voice_id;
    const refused = await tts(`${swahili}*0.5+af_bella*0.5`, 'Hello.');
    assert.equal(refused.statusCode, 422, refused.body);
    assert.equal(refused.json().error.param, 'language');
    assert.match(
      refused.json().error.message,
      /spoken by kokoro, which has no voices for 'sw' \(the blend's language: its first voice's\)/,
    );
    // Stored, it would speak Swahili by default: refused when stored, unless a language Kokoro speaks is given.
    const storedSwahili = await storeBlend(`${swahili}*0.5+af_bella*0.5`, keys.owner);
    assert.equal(storedSwahili.statusCode, 422, storedSwahili.body);
    assert.equal(storedSwahili.json().error.param, 'blend');
    assert.match(storedSwahili.json().error.message, /no voices for 'sw' \(the blend's language: its first voice's\)/);
    const storedEnglish = await storeBlend(`${swahili}*0.5+af_bella*0.5`, keys.owner, { language: 'en-us' });
    assert.equal(storedEnglish.statusCode, 201, storedEnglish.body);
    const named = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/tts',
      headers: as(keys.owner),
      payload: { text: 'Hello.', voice_id: `${swahili}*0.5+af_bella*0.5`, language: 'en-us', format: 'wav' },
    });
    assert.equal(named.statusCode, 200, named.body);
    // The other tests list this key's voices.
    for (const id of [storedId, storedEnglish.json().voice_id, cloned, swahili])
      assert.equal((await t.app.inject({ method: 'DELETE', url: `/v1/voices/${id}`, headers: as(keys.owner) })).statusCode, 200);
  });

  test('bad blends are refused naming the part: malformed, weight <= 0, unknown voice, another engine’s voice', async () => {
    const cases: Array<[string, number, RegExp]> = [
      ['af_bella*x+am_adam', 400, /part 'af_bella\*x'.*malformed/],
      ['af_bella*0+am_adam*1', 400, /part 'af_bella\*0'.*more than 0/],
      ['af_bella*-0.5+am_adam*1', 400, /part 'af_bella\*-0.5'.*more than 0/],
      ['af_bella*0.5+', 400, /part ''.*malformed/],
      ['af_bella*0.5+af_bella*0.5', 400, /'af_bella' appears twice/],
      ['af_nobody*0.5+am_adam*0.5', 404, /af_nobody/],
      ['espeak-sw*0.5+am_adam*0.5', 400, /part 'espeak-sw' is a voice of espeak: only Kokoro voices/],
    ];
    for (const [voiceId, status, message] of cases) {
      const r = await tts(voiceId, 'Hello.');
      assert.equal(r.statusCode, status, `${voiceId}: ${r.body}`);
      assert.equal(r.json().error.param, 'voice_id');
      assert.match(r.json().error.message, message, voiceId);
    }
  });

  test('POST /v1/voices with blend stores the mix by name: it speaks, lists as a blend, and is its owner’s', async () => {
    const form = multipartBody({ name: 'Bella and Adam', blend: 'af_bella*3+am_adam*1' }, {});
    const created = await t.app.inject({
      method: 'POST',
      url: '/v1/voices',
      headers: { ...as(keys.owner), 'content-type': form.contentType },
      payload: form.body,
    });
    assert.equal(created.statusCode, 201, created.body);
    const voice = created.json() as { voice_id: string; type: string; blend: unknown; languages: string[]; engine: string };
    assert.equal(voice.type, 'blend');
    assert.equal(voice.engine, 'kokoro');
    assert.deepEqual(voice.languages, ['en-us']);
    assert.deepEqual(voice.blend, [
      { voice_id: 'af_bella', weight: 0.75 },
      { voice_id: 'am_adam', weight: 0.25 },
    ]);
    const spoken = await tts(voice.voice_id, 'Hello there.');
    assert.equal(spoken.statusCode, 200, spoken.body);
    assert.equal(spoken.headers['x-voxd-engine'], 'kokoro');
    // A stored blend is a part like any other voice: expanded into its voices.
    const nested = await t.app.inject({
      method: 'GET',
      url: `/v1/voices/${encodeURIComponent(`${voice.voice_id}+af_heart`)}`,
      headers: as(keys.owner),
    });
    assert.equal(nested.statusCode, 200, nested.body);
    assert.deepEqual(nested.json().blend, [
      { voice_id: 'af_bella', weight: 0.375 },
      { voice_id: 'am_adam', weight: 0.125 },
      { voice_id: 'af_heart', weight: 0.5 },
    ]);
    // Voices of different languages: the blend speaks its first voice's (as Kokoro-FastAPI), unless a request names one.
    const crossLanguage = await t.app.inject({
      method: 'GET',
      url: `/v1/voices/${encodeURIComponent('ff_siwis*0.5+af_bella*0.5')}`,
      headers: as(keys.owner),
    });
    assert.deepEqual(crossLanguage.json().languages, ['fr']);
    const listed = await t.app.inject({ method: 'GET', url: '/v1/voices?type=blend', headers: as(keys.owner) });
    assert.deepEqual(
      listed.json().voices.map((v: { voice_id: string }) => v.voice_id),
      [voice.voice_id],
    );
    assert.equal((await tts(voice.voice_id, 'Hello.', keys.other)).statusCode, 404);
    assert.equal((await tts(`${voice.voice_id}*0.5+af_heart*0.5`, 'Hello.', keys.other)).statusCode, 404);

    const both = multipartBody({ name: 'x', blend: 'af_bella+am_adam' }, { files: { filename: 'a.wav', content: Buffer.alloc(100) } });
    const refused = await t.app.inject({
      method: 'POST',
      url: '/v1/voices',
      headers: { ...as(keys.owner), 'content-type': both.contentType },
      payload: both.body,
    });
    assert.equal(refused.statusCode, 400, refused.body);
    const badBlend = multipartBody({ name: 'x', blend: 'af_bella*0+am_adam' }, {});
    const bad = await t.app.inject({
      method: 'POST',
      url: '/v1/voices',
      headers: { ...as(keys.owner), 'content-type': badBlend.contentType },
      payload: badBlend.body,
    });
    assert.equal(bad.statusCode, 400, bad.body);
    assert.equal(bad.json().error.param, 'blend');
    const deleted = await t.app.inject({ method: 'DELETE', url: `/v1/voices/${voice.voice_id}`, headers: as(keys.owner) });
    assert.equal(deleted.statusCode, 200, deleted.body);
  });
});

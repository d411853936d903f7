/**
 * Pronunciation dictionaries through the server: a PLS lexicon becomes rules (alias, IPA and X-SAMPA phonemes, per
 * language), bad lexicons are 400s naming the line, dictionaries are their owner's (and admin keys'), and every speech entry
 * (tts, OpenAI's speech, jobs, the speech socket) has the named dictionaries' rules applied to what the engine is asked to say.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import type { PronunciationRule } from '../../src/lexicons/contract.js';
import type { SynthesisRequest } from '../../src/operations/synthesize/synthesizer.js';
import { buildTestApp, listen, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const lexicon = `<?xml version="1.0" encoding="UTF-8"?>
<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en-US">
  <metadata>made for the test</metadata>
  <lexeme>
    <grapheme>Zork</grapheme>
    <phoneme>bɹɛd</phoneme>
  </lexeme>
  <lexeme>
    <grapheme>W3C</grapheme>
    <grapheme>W3c</grapheme>
    <alias>World Wide Web Consortium</alias>
  </lexeme>
  <lexeme xml:lang="de">
    <grapheme>Tschüss</grapheme>
    <alias>Tschau</alias>
    <phoneme alphabet="x-sampa" prefer="true">tSYs</phoneme>
  </lexeme>
</lexicon>
`;

const expectedRules: PronunciationRule[] = [
  { kind: 'phoneme', graphemes: ['Zork'], phonemes: 'bɹɛd', alphabet: 'ipa', language: 'en-US' },
  { kind: 'alias', graphemes: ['W3C', 'W3c'], alias: 'World Wide Web Consortium', language: 'en-US' },
  { kind: 'phoneme', graphemes: ['Tschüss'], phonemes: 'tSYs', alphabet: 'x-sampa', language: 'de' },
];

describe('pronunciation dictionaries', () => {
  let t: TestApp;
  let keys: { owner: string; other: string; noTts: string; admin: string };
  /** What the Kokoro engine was asked to speak, in order. */
  const requests: SynthesisRequest[] = [];

  const upload = (key: string, document: string, name = 'Brand names') => {
    const form = multipartBody(
      { name },
      { file: { filename: 'names.pls', content: Buffer.from(document), contentType: 'application/pls+xml' } },
    );
    return t.app.inject({
      method: 'POST',
      url: '/v1/pronunciation-dictionaries',
      headers: { authorization: `Bearer ${key}`, 'content-type': form.contentType },
      payload: form.body,
    });
  };
  const as = (key: string) => ({ authorization: `Bearer ${key}` });

  before(async () => {
    await Promise.all(['kokoro-82m', 'kokoro-voices', 'misaki-lexicon'].map((id) => modelFile(id, '')));
    t = await buildTestApp();
    keys = {
      owner: await t.keyWith(['tts']),
      other: await t.keyWith(['tts']),
      noTts: await t.keyWith(['voices']),
      admin: await t.keyWith(['admin']),
    };
    // What the engine is asked to say once the rules are applied (ssml.test.ts hears the effect).
    const kokoro = await t.container.synthesizers.get('kokoro-82m')!.get();
    const synthesize = kokoro.synthesize.bind(kokoro);
    kokoro.synthesize = (request) => {
      requests.push(request);
      return synthesize(request);
    };
  });
  after(async () => t.close());

  test('a PLS lexicon becomes rules: alias and phoneme (ipa, x-sampa), the preferred pronunciation, per language', async () => {
    const created = await upload(keys.owner, lexicon);
    assert.equal(created.statusCode, 201, created.body);
    const body = created.json() as { id: string; name: string; rules: PronunciationRule[] };
    assert.match(body.id, /^pdict_/);
    assert.equal(body.name, 'Brand names');
    assert.deepEqual(body.rules, expectedRules);
    const fetched = await t.app.inject({ method: 'GET', url: `/v1/pronunciation-dictionaries/${body.id}`, headers: as(keys.owner) });
    assert.deepEqual(fetched.json().rules, expectedRules);
  });

  test('a bad lexicon is a 400 naming its line', async () => {
    const cases: Array<[string, RegExp]> = [
      [lexicon.replace('</alias>', '</alia>'), /line 11\b/],
      [
        lexicon.replace('<alias>World', '<sub>World').replace('Consortium</alias>', 'Consortium</sub>'),
        /line 11: <sub> is not allowed inside <lexeme>/,
      ],
      [lexicon.replace(' alphabet="ipa"', ''), /line 6: a <phoneme> needs an alphabet/],
      [lexicon.replace('alphabet="ipa"', 'alphabet="arpabet"'), /line 2: alphabet 'arpabet' is not supported/],
      [lexicon.replace(' xml:lang="en-US"', ''), /line 4: .*xml:lang/],
      [lexicon.replace('<grapheme>Zork</grapheme>', ''), /line 4: a <lexeme> needs at least one <grapheme>/],
      ['<speak>Hello</speak>', /line 1: <speak> is not a PLS element/],
      ['not xml at all', /line 1\b/],
    ];
    for (const [document, message] of cases) {
      const r = await upload(keys.owner, document);
      assert.equal(r.statusCode, 400, r.body);
      assert.equal(r.json().error.param, 'file');
      assert.match(r.json().error.message, message);
    }
    const noFile = multipartBody({ name: 'x' }, {});
    const r = await t.app.inject({
      method: 'POST',
      url: '/v1/pronunciation-dictionaries',
      headers: { ...as(keys.owner), 'content-type': noFile.contentType },
      payload: noFile.body,
    });
    assert.equal(r.statusCode, 400, r.body);
  });

  test('PATCH renames, removes rules by grapheme and adds rules; unknown graphemes and bad rules are refused', async () => {
    const id = (await upload(keys.owner, lexicon)).json().id as string;
    const added: PronunciationRule = { kind: 'alias', graphemes: ['voxd'], alias: 'vox dee', language: 'en' };
    const patched = await t.app.inject({
      method: 'PATCH',
      url: `/v1/pronunciation-dictionaries/${id}`,
      headers: as(keys.owner),
      payload: { name: 'Renamed', remove_rules: ['W3c'], add_rules: [added] },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().name, 'Renamed');
    assert.deepEqual(patched.json().rules, [expectedRules[0], expectedRules[2], added]);
    const unknown = await t.app.inject({
      method: 'PATCH',
      url: `/v1/pronunciation-dictionaries/${id}`,
      headers: as(keys.owner),
      payload: { remove_rules: ['Nothing'] },
    });
    assert.equal(unknown.statusCode, 422, unknown.body);
    const badAlphabet = await t.app.inject({
      method: 'PATCH',
      url: `/v1/pronunciation-dictionaries/${id}`,
      headers: as(keys.owner),
      payload: { add_rules: [{ kind: 'phoneme', graphemes: ['a'], phonemes: 'eɪ', alphabet: 'arpabet', language: 'en' }] },
    });
    assert.equal(badAlphabet.statusCode, 400, badAlphabet.body);
  });

  test('a dictionary is its owner’s (and admin keys’): 404 to other keys, 403 without scope tts', async () => {
    const id = (await upload(keys.owner, lexicon)).json().id as string;
    const url = `/v1/pronunciation-dictionaries/${id}`;
    assert.equal((await t.app.inject({ method: 'GET', url, headers: as(keys.other) })).statusCode, 404);
    assert.equal((await t.app.inject({ method: 'PATCH', url, headers: as(keys.other), payload: { name: 'x' } })).statusCode, 404);
    assert.equal((await t.app.inject({ method: 'DELETE', url, headers: as(keys.other) })).statusCode, 404);
    assert.equal((await t.app.inject({ method: 'DELETE', url, headers: as(keys.noTts) })).statusCode, 403);
    assert.equal((await upload(keys.noTts, lexicon)).statusCode, 403);
    const listed = (key: string) =>
      t.app
        .inject({ method: 'GET', url: '/v1/pronunciation-dictionaries', headers: as(key) })
        .then((r) => r.json().pronunciation_dictionaries);
    assert.ok((await listed(keys.owner)).some((d: { id: string }) => d.id === id));
    assert.ok(!(await listed(keys.other)).some((d: { id: string }) => d.id === id));
    assert.ok((await listed(keys.admin)).some((d: { id: string; rule_count: number }) => d.id === id && d.rule_count === 3));
    assert.equal((await t.app.inject({ method: 'GET', url, headers: as(keys.admin) })).statusCode, 200);
    const deleted = await t.app.inject({ method: 'DELETE', url, headers: as(keys.owner) });
    assert.deepEqual(deleted.json(), { id, deleted: true });
    assert.equal((await t.app.inject({ method: 'GET', url, headers: as(keys.owner) })).statusCode, 404);
  });

  test('the named dictionaries’ rules change what the engine is asked to say: tts, OpenAI speech, jobs, the socket', async () => {
    const first = (await upload(keys.owner, lexicon)).json().id as string;
    const extra = `<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en">
  <lexeme><grapheme>voxd</grapheme><alias>vox dee</alias></lexeme>
</lexicon>`;
    const second = (await upload(keys.owner, extra)).json().id as string;

    /** Whether the engine was asked to say the phonemes of the Zork rule since `requests` was emptied. */
    const saidAsBread = () => requests.some((r) => r.parts?.some((p) => p.ipa?.replaceAll('ˈ', '') === 'bɹɛd'));
    requests.length = 0;
    const tts = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/tts',
      headers: as(keys.owner),
      payload: { text: 'Zork.', voice_id: 'af_heart', format: 'wav', pronunciation_dictionary_ids: [second, first] },
    });
    assert.equal(tts.statusCode, 200, tts.body);
    assert.ok(saidAsBread(), JSON.stringify(requests));

    requests.length = 0;
    const speech = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/speech',
      headers: as(keys.owner),
      payload: { input: 'Zork.', voice: 'alloy', response_format: 'wav', pronunciation_dictionary_ids: [first] },
    });
    assert.equal(speech.statusCode, 200, speech.body);
    assert.ok(saidAsBread(), JSON.stringify(requests));

    // Without dictionaries the word is spoken as written.
    requests.length = 0;
    await t.app.inject({ method: 'POST', url: '/v1/audio/tts', headers: as(keys.owner), payload: { text: 'Zork.', voice_id: 'af_heart' } });
    assert.ok(!saidAsBread() && requests.some((r) => r.text.includes('Zork')), JSON.stringify(requests));

    // A job is checked when submitted: another key's dictionary is a 404 then, not a failed job later.
    const otherJob = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/tts',
      headers: as(keys.other),
      payload: { text: 'Zork.', voice_id: 'af_heart', async: true, pronunciation_dictionary_ids: [first] },
    });
    assert.equal(otherJob.statusCode, 404, otherJob.body);
    assert.equal(otherJob.json().error.param, 'pronunciation_dictionary_ids');
    const job = await t.app.inject({
      method: 'POST',
      url: '/v1/audio/tts',
      headers: as(keys.owner),
      payload: { text: 'Zork.', voice_id: 'af_heart', async: true, pronunciation_dictionary_ids: [first] },
    });
    assert.equal(job.statusCode, 202, job.body);

    const host = await listen(t);
    const socket = new WebSocket(`ws://${host}/v1/audio/tts/stream`, { headers: as(keys.owner) });
    const messages: Array<{ type: string }> = [];
    await new Promise<void>((resolve, reject) => {
      socket.on('open', () => {
        socket.send(JSON.stringify({ type: 'start', voice_id: 'af_heart', pronunciation_dictionary_ids: [second] }));
        socket.send(JSON.stringify({ type: 'text', text: 'voxd speaks.' }));
        socket.send(JSON.stringify({ type: 'close' }));
      });
      socket.on('message', (data, isBinary) => {
        if (!isBinary) messages.push(JSON.parse(data.toString()));
      });
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    assert.ok(!messages.some((m) => m.type === 'error'), JSON.stringify(messages));
    assert.ok(requests.at(-1)?.text.includes('vox dee'), JSON.stringify(requests.at(-1)));
  });

  test('unknown, another key’s, repeated or more than three dictionaries are refused before any speech', async () => {
    const mine = (await upload(keys.owner, lexicon)).json().id as string;
    const tts = (key: string, ids: string[]) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/audio/tts',
        headers: as(key),
        payload: { text: 'Zork.', voice_id: 'af_heart', pronunciation_dictionary_ids: ids },
      });
    const unknown = await tts(keys.owner, ['pdict_00000000000000000000']);
    assert.equal(unknown.statusCode, 404, unknown.body);
    assert.equal(unknown.json().error.param, 'pronunciation_dictionary_ids');
    assert.equal((await tts(keys.other, [mine])).statusCode, 404);
    assert.equal((await tts(keys.owner, [mine, mine])).statusCode, 400);
    assert.equal((await tts(keys.owner, [mine, mine, mine, mine])).statusCode, 400);
  });

  test('the routes and the new field are in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } }>
      >;
    };
    const collection = doc.paths['/v1/pronunciation-dictionaries']!;
    const one = doc.paths['/v1/pronunciation-dictionaries/{dictionary_id}']!;
    assert.ok(collection.post && collection.get && one.get && one.patch && one.delete);
    assert.ok(collection.post.requestBody!.content['multipart/form-data']!.schema.properties.file);
    assert.ok(doc.paths['/v1/audio/tts']!.post!.requestBody!.content['application/json']!.schema.properties.pronunciation_dictionary_ids);
    assert.ok(
      doc.paths['/v1/audio/speech']!.post!.requestBody!.content['application/json']!.schema.properties.pronunciation_dictionary_ids,
    );
  });
});

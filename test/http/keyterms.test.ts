/** Key terms through HTTP with the real engines on real recordings that Whisper base gets wrong without them. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, evalDir, multipartBody, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';

const audio = (relative: string): Buffer => readFileSync(path.join(evalDir, relative));

interface Found {
  term: string;
  count: number;
  occurrences: Array<{ start: number; end: number }>;
}
interface Transcript {
  text: string;
  found_keyterms?: Found[];
  warnings: string[];
}

describe('keyterms on POST /v1/audio/transcribe', () => {
  let t: TestApp;
  before(async () => {
    await Promise.all([modelFile('whisper-base', 'ggml-base.bin'), modelFile('silero-vad', 'silero_vad.onnx')]);
    t = await buildTestApp();
  });
  after(async () => t.close());

  const transcribe = async (file: string, fields: Record<string, string | string[]>) => {
    const form = multipartBody(fields, { audio: { filename: 'clip.wav', content: audio(file) } });
    return t.app.inject({
      method: 'POST',
      url: '/v1/audio/transcribe',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': form.contentType },
      payload: form.body,
    });
  };

  test('a phrase Whisper base mishears comes back spelled as listed and is reported with its time; absent terms are not', async () => {
    // Without terms: "She had a dark suit and greasy wash for her old year."
    const r = await transcribe('asr/deepspeech/LDC93S1.wav', { language: 'en', keyterms: 'wash water, Kubernetes' });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json() as Transcript;
    assert.match(body.text, /greasy wash water/);
    assert.equal(body.found_keyterms?.length, 1, JSON.stringify(body.found_keyterms));
    const [found] = body.found_keyterms!;
    assert.equal(found!.term, 'wash water');
    assert.equal(found!.count, 1);
    assert.ok(found!.occurrences[0]!.start > 0.8 && found!.occurrences[0]!.end < 2.9, JSON.stringify(found));
  });

  test('Chinese: a term given as a JSON array replaces the homophone Whisper base writes (停止 -> 停滞)', async () => {
    const body = (await transcribe('asr/firered/BAC009S0764W0121.wav', { language: 'zh', keyterms: '["停滞"]' })).json() as Transcript;
    assert.match(body.text, /停滞/);
    assert.deepEqual(
      body.found_keyterms?.map((k) => [k.term, k.count]),
      [['停滞', 1]],
    );
  });

  test('the field repeated: each value is a term; counts per term', async () => {
    const body = (
      await transcribe('asr/whisper_cpp/jfk.wav', {
        language: 'en',
        keyterms: ['Americans', 'your country'],
        response_format: 'verbose_json',
      })
    ).json() as Transcript;
    assert.deepEqual(
      body.found_keyterms?.map((k) => [k.term, k.count]),
      [
        ['Americans', 1],
        ['your country', 2],
      ],
    );
  });

  test('a clip that terms in other languages made Whisper say twice over comes back once', async () => {
    const stress = [
      'nacquero',
      'alcune',
      '이리저리',
      '停滞',
      '销售',
      '商场',
      '业绩',
      '汇报',
      '各部门',
      'wash water',
      'бедняга',
      'Quilter',
      'Leichenhalle',
      'conseiller général',
      'Americans',
      'wizard',
      'chiefly induced',
    ];
    // Decoded with these terms in its prompt, the Korean clip came back as its sentence twice, the second time a little different.
    const body = (
      await transcribe('asr/pv_leopard/test_ko.wav', { language: 'ko', keyterms: JSON.stringify(stress) })
    ).json() as Transcript;
    assert.equal(body.text.match(/걸어갔다/g)?.length, 1, body.text);
  });

  test('without keyterms the response has no found_keyterms', async () => {
    const body = (await transcribe('asr/whisper_cpp/jfk.wav', { language: 'en' })).json() as Transcript;
    assert.equal(body.found_keyterms, undefined);
  });

  test('too many or too long key terms -> 400 with param keyterms', async () => {
    const tooMany = JSON.stringify(Array.from({ length: 101 }, (_, i) => `term ${i}`));
    for (const keyterms of [tooMany, `fine, ${'x'.repeat(51)}`, ['fine', 'y'.repeat(51)], '["unclosed']) {
      const r = await transcribe('asr/whisper_cpp/jfk.wav', { keyterms });
      assert.equal(r.statusCode, 400, r.body);
      assert.equal(r.json().error.param, 'keyterms');
    }
  });
});

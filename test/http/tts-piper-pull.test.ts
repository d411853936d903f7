/** A Piper voice pulled while the server runs is spoken without a restart. */
import assert from 'node:assert/strict';
import { readdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { catalog } from '../../src/models/catalog/index.js';
import { ModelManager } from '../../src/models/manager.js';
import { buildTestApp, makeTempDir, sharedModelsDir, type TestApp } from '../helpers/app.js';
import { modelFile, testModelsDir } from '../helpers/models.js';
import { joeModelId, joeVoiceId } from '../helpers/tts.js';

describe('a Piper voice pulled while the server runs', () => {
  let t: TestApp;
  let modelsDir: string;
  before(async () => {
    await Promise.all([joeModelId, 'kokoro-82m', 'kokoro-voices', 'misaki-lexicon'].map((id) => modelFile(id, '')));
    // Every installed model but joe (and the built-in voices' analyses and the download cache, shared).
    modelsDir = makeTempDir('models');
    for (const entry of readdirSync(testModelsDir, { withFileTypes: true }))
      if (entry.isDirectory() && entry.name !== joeModelId)
        symlinkSync(path.join(testModelsDir, entry.name), path.join(modelsDir, entry.name));
    t = await buildTestApp({ VOXD_MODELS_DIR: modelsDir });
  });
  after(async () => t?.close());

  const auth = () => ({ authorization: `Bearer ${t.key}` });
  const listed = async () =>
    (
      (await t.app.inject({ method: 'GET', url: '/v1/voices?type=builtin', headers: auth() })).json().voices as Array<{ voice_id: string }>
    ).map((v) => v.voice_id);
  const englishNeural = async () =>
    (
      (await t.app.inject({ method: 'GET', url: '/v1/capabilities' })).json().tts.neural_languages as Array<{
        language: string;
        voices: string[];
      }>
    ).find((n) => n.language === 'en-us')!.voices;

  test('is listed and speaks within seconds, with no restart', { timeout: 180_000 }, async () => {
    const speak = () =>
      t.app.inject({
        method: 'POST',
        url: '/v1/audio/tts',
        headers: auth(),
        payload: { text: 'Good morning, everyone.', voice_id: joeVoiceId, format: 'wav' },
      });
    assert.ok(!(await listed()).includes(joeVoiceId));
    assert.ok(!(await englishNeural()).includes(joeVoiceId));
    assert.equal((await speak()).statusCode, 404);

    // `voxd models pull` in another process: the same manager, on the server's models directory.
    await new ModelManager({ modelsDir, localModelDirs: [sharedModelsDir], catalog }).pull(joeModelId);
    const pulledAt = performance.now();
    while (!(await listed()).includes(joeVoiceId)) {
      assert.ok(performance.now() - pulledAt < 15_000, 'joe listed within 15 s of its pull');
      await sleep(500);
    }
    assert.ok((await englishNeural()).includes(joeVoiceId));
    const spoken = await speak();
    assert.equal(spoken.statusCode, 200, spoken.body);
    assert.equal(spoken.headers['x-voxd-engine'], 'piper');
  });
});

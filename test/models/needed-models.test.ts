/**
 * Issue 32: setup pulls what /v1/ready waits for. The set is derived from the models the enabled operations load
 * (`voxd models pull --needed`), not kept by hand; a model pulled while the server runs is picked up by readiness.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { catalog } from '../../src/models/catalog/index.js';
import { packageRoot } from '../../src/core/version.js';
import { buildTestApp, makeTempDir } from '../helpers/app.js';
import { modelFile, testModelsDir } from '../helpers/models.js';

/** A model with the models pulled with it (what `voxd models pull ID` installs). */
const withCompanions = (id: string): string[] => [
  id,
  ...(catalog.find((spec) => spec.id === id)?.pulledWith ?? []).flatMap(withCompanions),
];

/** A models directory holding links to these installed models only (and, if asked, to the derived analyses). */
function modelsDirWith(ids: string[], options: { derived: boolean }): string {
  const dir = makeTempDir('models-needed');
  for (const id of ids) symlinkSync(path.join(testModelsDir, id), path.join(dir, id));
  if (options.derived && existsSync(path.join(testModelsDir, '.builtin-voices')))
    symlinkSync(path.join(testModelsDir, '.builtin-voices'), path.join(dir, '.builtin-voices'));
  return dir;
}

describe('the models setup pulls', () => {
  test('setup.sh pulls the needed set of the enabled operations, no list of its own', () => {
    const script = readFileSync(path.join(packageRoot, 'scripts/setup.sh'), 'utf8');
    const pulls = script.split('\n').filter((line) => /models pull/.test(line) && !line.trimStart().startsWith('#'));
    assert.deepEqual(pulls, ['node dist/src/cli/main.js models pull --needed']);
  });

  test('they are every model /v1/ready waits for: with only them installed, every operation becomes ready', {
    timeout: 900_000,
  }, async () => {
    const probe = await buildTestApp();
    const needed = probe.container.neededModels();
    await probe.close();
    assert.ok(
      ['silero-vad', 'whisper-base', 'spleeter-2stems', 'kokoro-82m', 'resemblyzer-ge2e'].every((id) => needed.includes(id)),
      needed.join(', '),
    );
    const installed = [...new Set(needed.flatMap(withCompanions))];
    await Promise.all(installed.map((id) => modelFile(id, '')));

    // No local source: nothing can be fetched, so what loads is what the directory holds.
    const t = await buildTestApp({ VOXD_MODELS_DIR: modelsDirWith(installed, { derived: true }), VOXD_LOCAL_MODEL_DIRS: '' });
    try {
      await t.container.preload();
      const ready = await t.app.inject({ method: 'GET', url: '/v1/ready' });
      assert.equal(ready.statusCode, 200, ready.body);
      for (const model of ready.json().models as Array<{ id: string; loaded: boolean }>) assert.ok(model.loaded, model.id);
    } finally {
      await t.close();
    }
  });

  test('a model pulled while the server runs is picked up by /v1/ready, which until then names the command', async () => {
    const modelIds = ['deepfilternet3', 'dtln', 'spleeter-2stems'];
    await Promise.all(modelIds.map((id) => modelFile(id, '')));
    const modelsDir = modelsDirWith(
      modelIds.filter((id) => id !== 'spleeter-2stems'),
      { derived: false },
    );
    const t = await buildTestApp({ VOXD_MODELS_DIR: modelsDir, VOXD_LOCAL_MODEL_DIRS: '', VOXD_WORKER_OPERATIONS: 'separate' });
    try {
      await t.container.preload();
      const before = await t.app.inject({ method: 'GET', url: '/v1/ready' });
      assert.equal(before.statusCode, 503);
      assert.match(JSON.stringify(before.json().models), /voxd models pull spleeter-2stems/);
      // What `voxd models pull spleeter-2stems` leaves: the verified directory in place.
      symlinkSync(path.join(testModelsDir, 'spleeter-2stems'), path.join(modelsDir, 'spleeter-2stems'));
      let status = 503;
      for (const deadline = Date.now() + 60_000; status !== 200 && Date.now() < deadline; await sleep(500)) {
        status = (await t.app.inject({ method: 'GET', url: '/v1/ready' })).statusCode;
      }
      assert.equal(status, 200, 'ready without a restart');
    } finally {
      await t.close();
    }
  });
});

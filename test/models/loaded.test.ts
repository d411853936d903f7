import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LoadedModel, loadedFromCatalog } from '../../src/models/loaded.js';

test('close() during a load waits for it and releases what it loaded (a preload cut by shutdown leaves nothing running)', async () => {
  const released: string[] = [];
  let finishLoad: (model: string) => void = () => undefined;
  const model = new LoadedModel(
    'm',
    [],
    [],
    () => new Promise<string>((resolve) => (finishLoad = resolve)),
    async (m) => void released.push(m),
  );
  const loading = model.get();
  const closed = model.close();
  finishLoad('worker');
  await Promise.all([loading, closed]);
  assert.deepEqual(released, ['worker']);
  assert.equal(model.state().loaded, false);
});

test('a failed load is tried again when readiness asks (a model pulled while the server runs is picked up), not more often than every few seconds', async (t) => {
  t.mock.timers.enable({ apis: ['Date'] });
  let installed = false;
  let loads = 0;
  const model = new LoadedModel('m', ['tts'], ['m'], async () => {
    loads++;
    if (!installed) throw new Error("Model 'm' is not installed. Fetch it with: voxd models pull m");
    return 'model';
  });
  await assert.rejects(model.get(), /not installed/);
  assert.match(model.state().error ?? '', /voxd models pull m/);
  installed = true;
  model.retryFailed();
  assert.equal(loads, 1, 'not again at once');
  t.mock.timers.tick(5_000);
  model.retryFailed();
  assert.equal(loads, 2);
  await model.get();
  assert.deepEqual(model.state(), { id: 'm', operations: ['tts'], loaded: true });
  model.retryFailed();
  assert.equal(loads, 2, 'a loaded model is left alone');
});

test('loadedFromCatalog: the loader gets the directories of the models it declares, and no other', async () => {
  const required: string[] = [];
  const models = {
    require: async (id: string) => {
      required.push(id);
      return `/models/${id}`;
    },
    installed: async () => true,
  };
  const declared = loadedFromCatalog(
    models,
    { id: 'pair', operations: ['separate'], modelIds: ['a', 'b'], load: async ({ dir }) => [dir('a'), dir('b')] },
    1,
  );
  assert.deepEqual(await declared.get(), ['/models/a', '/models/b']);
  assert.deepEqual(required.sort(), ['a', 'b']);
  const undeclared = loadedFromCatalog(
    models,
    { id: 'sneaky', operations: ['separate'], modelIds: ['a'], load: async ({ dir }) => dir('c') },
    1,
  );
  await assert.rejects(undeclared.get(), /'sneaky' loads 'c', which it does not declare/);
});

test('after close() nothing loads again (a runtime started while the process exits can abort it)', async () => {
  let loads = 0;
  const model = new LoadedModel('m', ['tts'], ['m'], async () => {
    loads++;
    return 'model';
  });
  await model.get();
  await model.close();
  await assert.rejects(model.get(), /'m' is closed/);
  model.retryFailed();
  assert.equal(loads, 1);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LoadedModel } from '../../src/models/loaded.js';

test('close() during a load waits for it and releases what it loaded (a preload cut by shutdown leaves nothing running)', async () => {
  const released: string[] = [];
  let finishLoad: (model: string) => void = () => undefined;
  const model = new LoadedModel('m', [], () => new Promise<string>((resolve) => (finishLoad = resolve)), async (m) => void released.push(m));
  const loading = model.get();
  const closed = model.close();
  finishLoad('worker');
  await Promise.all([loading, closed]);
  assert.deepEqual(released, ['worker']);
  assert.equal(model.state().loaded, false);
});

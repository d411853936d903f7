import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkerSession } from '../../src/models/onnx-worker.js';
import { camppModelPath } from '../helpers/models.js';

const melBins = 80;

test('closing a session while a run is under way waits for the run, ends the worker and fails the caller (the process lives on)', async () => {
  const session = await WorkerSession.create('CAM++', await camppModelPath(), { intraOpNumThreads: 1 });
  // Two minutes of features: a run of about a second, long enough to be under way when close() comes.
  const frames = 12_000;
  const features = Float32Array.from({ length: frames * melBins }, (_, i) => Math.sin(i * 0.37));
  const fbank = session.tensor('float32', features, [1, frames, melBins]);
  const finished = await session.run({ fbank });
  assert.ok(Object.keys(finished).length > 0, 'a run before close answers');

  const running = session.run({ fbank });
  const outcome = running.then(
    () => 'answered',
    (error: Error) => error.message,
  );
  await sleep(200);
  await session.close();
  assert.equal(await outcome, 'CAM++ worker closed');
  await assert.rejects(session.run({ fbank }), /CAM\+\+ worker closed/);
  // Closing twice is harmless.
  await session.close();
});

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { onnxWorkersIdle, SessionPool, WorkerSession } from '../../src/models/onnx-worker.js';
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

test('onnxWorkersIdle resolves once no model is loading or running, and an exit then is clean (an exit under a run aborts the process)', async () => {
  const modelPath = await camppModelPath();
  const creating = WorkerSession.create('CAM++', modelPath, { intraOpNumThreads: 1 });
  let idle = false;
  const loadedIdle = onnxWorkersIdle().then(() => (idle = true));
  await sleep(10);
  assert.equal(idle, false, 'a load is under way');
  const session = await creating;
  await loadedIdle;
  const frames = 12_000;
  const fbank = session.tensor(
    'float32',
    Float32Array.from({ length: frames * melBins }, (_, i) => Math.cos(i * 0.11)),
    [1, frames, melBins],
  );
  const running = session.run({ fbank });
  idle = false;
  const ranIdle = onnxWorkersIdle().then(() => (idle = true));
  await sleep(100);
  assert.equal(idle, false, 'a run is under way');
  await running;
  await ranIdle;
  await session.close();

  const exitDuringRun = async (when: 'now' | 'idle' | 'close') => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures/exit-during-run.ts'), modelPath, when],
      { stdio: 'ignore' },
    );
    const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
    return signal ?? code;
  };
  assert.equal(await exitDuringRun('idle'), 3);
  // A worker being closed keeps the process alive until it has exited, even once its last run has answered.
  assert.equal(await exitDuringRun('close'), 4);
  assert.equal(await exitDuringRun('now'), 'SIGABRT', 'the hazard this guards against');
});

test('a session pool answers as one session does, runs side by side up to its size, and opens again after closing when idle', async () => {
  const modelPath = await camppModelPath();
  const single = await WorkerSession.create('CAM++', modelPath, { intraOpNumThreads: 1 });
  const pool = new SessionPool('CAM++ (pool)', modelPath, 2, 50);
  try {
    const inputs = [0.37, 0.11, 0.53].map((step) =>
      single.tensor(
        'float32',
        Float32Array.from({ length: 300 * melBins }, (_, i) => Math.sin(i * step)),
        [1, 300, melBins],
      ),
    );
    const expected = await Promise.all(
      inputs.map(async (fbank) => [...(Object.values(await single.run({ fbank }))[0]!.data as Float32Array)]),
    );
    // Three runs on a pool of two: the third waits for a session.
    const pooled = await Promise.all(inputs.map(async (fbank) => [...(Object.values(await pool.run({ fbank }))[0]!.data as Float32Array)]));
    assert.deepEqual(pooled, expected);
    await sleep(200);
    const again = Object.values(await pool.run({ fbank: inputs[0]! }))[0]!.data as Float32Array;
    assert.deepEqual([...again], expected[0], 'a run after the idle sessions closed opens a new one');
  } finally {
    await Promise.all([single.close(), pool.close()]);
  }
});

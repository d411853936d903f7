import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VoxError } from '../../src/core/errors.js';
import { Scheduler } from '../../src/core/scheduler.js';
import { Metrics } from '../../src/core/metrics.js';

function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe('scheduler', () => {
  test('a full queue answers overloaded with Retry-After', async () => {
    const scheduler = new Scheduler({ concurrency: 1, queueLimit: 1, shortJobSeconds: 30 }, new Metrics());
    const blocker = gate();
    const running = scheduler.run('transcribe', 5, undefined, () => blocker.promise);
    const queued = scheduler.run('transcribe', 5, undefined, async () => 'second');
    await assert.rejects(
      scheduler.run('transcribe', 5, undefined, async () => 'third'),
      (error: VoxError) => {
        assert.equal(error.code, 'overloaded');
        assert.equal(error.status, 503);
        assert.ok((error.retryAfterSeconds ?? 0) > 0);
        return true;
      },
    );
    blocker.open();
    await running;
    assert.equal(await queued, 'second');
  });

  test('a job that answers early (a stream) keeps its slot until the rest of its work is done', async () => {
    const scheduler = new Scheduler({ concurrency: 1, queueLimit: 4, shortJobSeconds: 30 }, new Metrics());
    const rest = gate();
    const order: string[] = [];
    const answer = await scheduler.run('tts', 5, undefined, async (_signal, keepSlotUntil) => {
      keepSlotUntil(rest.promise.then(() => order.push('stream ended')));
      return 'first piece';
    });
    assert.equal(answer, 'first piece');
    const next = scheduler.run('tts', 5, undefined, async () => order.push('next job'));
    const drained = scheduler.drain();
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(order, []);
    rest.open();
    await next;
    await drained;
    assert.deepEqual(order, ['stream ended', 'next job']);
  });

  test('a short job is not stuck behind a long one', async () => {
    const scheduler = new Scheduler({ concurrency: 1, queueLimit: 4, shortJobSeconds: 30 }, new Metrics());
    const long = gate();
    const longJob = scheduler.run('separate', 1200, undefined, () => long.promise);
    assert.equal(await scheduler.run('separate', 10, undefined, async () => 'short done'), 'short done');
    long.open();
    await longJob;
  });

  test('an aborted request leaves the queue without running', async () => {
    const scheduler = new Scheduler({ concurrency: 1, queueLimit: 4, shortJobSeconds: 30 }, new Metrics());
    const blocker = gate();
    const running = scheduler.run('tts', 1, undefined, () => blocker.promise);
    const controller = new AbortController();
    let ran = false;
    const waiting = scheduler.run('tts', 1, controller.signal, async () => {
      ran = true;
    });
    controller.abort();
    await assert.rejects(waiting, (error: VoxError) => error.code === 'aborted');
    blocker.open();
    await running;
    assert.equal(ran, false);
  });

  test('drain waits for running work and then refuses new work', async () => {
    const scheduler = new Scheduler({ concurrency: 1, queueLimit: 4, shortJobSeconds: 30 }, new Metrics());
    let finished = false;
    void scheduler.run('vc', 1, undefined, async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      finished = true;
    });
    await scheduler.drain();
    assert.equal(finished, true);
    await assert.rejects(
      scheduler.run('vc', 1, undefined, async () => 1),
      (error: VoxError) => error.code === 'overloaded',
    );
  });
});

describe('scheduler without a waiting room', () => {
  test('queue limit 0 runs a job when a slot is free and refuses only when none is', async () => {
    const scheduler = new Scheduler({ concurrency: 1, queueLimit: 0, shortJobSeconds: 30 }, new Metrics());
    const blocker = gate();
    const running = scheduler.run('tts', 1, undefined, () => blocker.promise);
    await assert.rejects(
      scheduler.run('tts', 1, undefined, async () => 1),
      (error: VoxError) => error.code === 'overloaded',
    );
    blocker.open();
    await running;
    assert.equal(await scheduler.run('tts', 1, undefined, async () => 2), 2);
  });
});

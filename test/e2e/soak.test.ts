/**
 * Soak: a minute of mixed load (transcription, speech, separation, voice creation and deletion) from four clients on
 * the real server process, with a health probe every second. The server once deadlocked within 6-14 s of such load.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runSoak } from '../../bench/lib/soak.js';
import { evalDir } from '../helpers/app.js';
import { startServer, testKey, waitUntilReady, type ServerProcess } from '../helpers/server.js';

const keys = ['soak1', 'soak2', 'soak3', 'soak4'].map(testKey);
let server: ServerProcess;

before(async () => {
  server = await startServer({ VOXD_API_KEYS: keys.join(','), VOXD_LOG_LEVEL: 'warn' });
  await waitUntilReady(server.base);
});

after(() => {
  if (server.child.exitCode === null) server.child.kill('SIGKILL');
});

test('75 s of mixed load: every health probe answers and every request ends', async () => {
  const result = await runSoak({ base: server.base, keys, durationSeconds: 75, evalDir, requestTimeoutSeconds: 90 });
  const summary = JSON.stringify(result);
  // A probe waits 10 s at most, so a stalled server fails here; how fast probes answer under load is bench/soak.ts's
  // measure (no probe over 2 s), not this test's.
  assert.equal(result.probes.failed, 0, summary);
  assert.equal(result.unfinished, 0, summary);
  assert.equal(result.unexpected, 0, `${summary}\n${server.output().slice(-3000)}`);
  for (const [operation, stats] of Object.entries(result.operations)) {
    const succeeded = Object.entries(stats.statuses)
      .filter(([status]) => status.startsWith('2'))
      .reduce((sum, [, n]) => sum + n, 0);
    assert.ok(succeeded > 0, `${operation} never succeeded: ${summary}`);
  }
  assert.equal(server.child.exitCode, null, 'the server is still running');
});

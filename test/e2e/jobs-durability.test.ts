/** Jobs survive the server: SIGKILL mid-job, SIGTERM past the grace period, webhooks owed across a restart. */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { freePort } from '../../bench/lib/server-process.js';
import { makeTempDir } from '../helpers/app.js';
import { Api, longSpeech, startReceiver, type Job } from '../helpers/jobs.js';
import { startServer, testKey, type ServerProcess } from '../helpers/server.js';

const key = testKey('dura');
const servers: ServerProcess[] = [];
const env = {
  VOXD_API_KEYS: key,
  VOXD_WEBHOOK_ALLOW_PRIVATE: 'true',
  VOXD_WEBHOOK_RETRY_BASE_MS: '300',
  VOXD_JOB_LEASE_SECONDS: '3',
  VOXD_RATE_LIMIT_PER_MINUTE: '100000',
  VOXD_LOG_LEVEL: 'warn',
};

async function start(dataDir: string, extra: Record<string, string> = {}): Promise<Api> {
  const server = await startServer({ ...env, ...extra }, { dataDir });
  servers.push(server);
  return new Api(server.base, key);
}

async function kill(signal: NodeJS.Signals): Promise<number | string> {
  const server = servers.at(-1)!;
  server.child.kill(signal);
  return server.exited;
}

after(async () => {
  for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
});

test('SIGKILL mid-job: after a restart the job runs again and succeeds once; its webhook, owed across restarts, arrives once', async () => {
  const dataDir = makeTempDir('jobs-kill');
  const audio = await longSpeech(6);
  const port = await freePort();
  let api = await start(dataDir, { VOXD_PRELOAD_MODELS: 'true' });
  const { id } = (await (
    await api.postForm('/v1/audio/transcribe', { webhook_url: `http://127.0.0.1:${port}/hook` }, { audio })
  ).json()) as Job;
  await api.waitFor(id, (job) => job.status === 'running' && job.progress !== null);
  assert.equal(await kill('SIGKILL'), 'SIGKILL');

  api = await start(dataDir);
  const done = await api.waitFor(id);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.equal(done.attempts, 2);
  assert.match((done.result as { text: string }).text, /ask not what your country can do for you/);
  // The receiver is down: the delivery is owed. Kill the server again before it can deliver, then bring both up.
  await api.waitFor(id, (job) => (job.webhook?.deliveries[0]?.attempts.length ?? 0) >= 1, 30_000);
  await kill('SIGKILL');
  const receiver = await startReceiver(port);
  try {
    api = await start(dataDir);
    const delivered = await api.waitFor(id, (job) => job.webhook?.deliveries[0]?.status === 'delivered', 60_000);
    assert.equal(delivered.webhook!.deliveries.length, 1);
    assert.equal(receiver.received.filter((hit) => hit.answeredStatus < 300).length, 1, 'one successful delivery');
    const secret = ((await (await api.fetch('/v1/webhook-secret')).json()) as { secret: string }).secret;
    const payload = new Webhook(secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers as Record<string, string>) as {
      type: string;
      data: Job;
    };
    assert.equal(payload.type, 'job.succeeded');
    assert.equal(payload.data.attempts, 2);
  } finally {
    await receiver.close();
    await kill('SIGKILL');
  }
});

test('SIGTERM past the grace period gives the running job back to the queue; the next start completes it', async () => {
  const dataDir = makeTempDir('jobs-term');
  const audio = await longSpeech(6);
  let api = await start(dataDir, { VOXD_SHUTDOWN_GRACE_SECONDS: '1' });
  const { id } = (await (await api.postForm('/v1/audio/transcribe', { async: 'true' }, { audio })).json()) as Job;
  await api.waitFor(id, (job) => job.status === 'running' && job.progress !== null);
  assert.equal(await kill('SIGTERM'), 1, `aborted work: exit code 1\n${servers.at(-1)!.output()}`);

  api = await start(dataDir);
  const queuedAgain = await api.job(id);
  assert.ok(['queued', 'running'].includes(queuedAgain.status), queuedAgain.status);
  const done = await api.waitFor(id);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  // The interrupted attempt was given back, not counted.
  assert.equal(done.attempts, 1);
  await kill('SIGKILL');
});

test('a job whose worker died more than VOXD_JOB_MAX_ATTEMPTS times fails with a clear error', async () => {
  const dataDir = makeTempDir('jobs-attempts');
  const audio = await longSpeech(6);
  let api = await start(dataDir, { VOXD_JOB_MAX_ATTEMPTS: '1' });
  const { id } = (await (await api.postForm('/v1/audio/transcribe', { async: 'true' }, { audio })).json()) as Job;
  await api.waitFor(id, (job) => job.status === 'running');
  await kill('SIGKILL');
  api = await start(dataDir, { VOXD_JOB_MAX_ATTEMPTS: '1' });
  const failed = await api.waitFor(id, undefined, 30_000);
  assert.equal(failed.status, 'failed');
  assert.match(failed.error!.message, /stopped \(a crash or a kill\) during its only attempt/);
  await kill('SIGKILL');
});

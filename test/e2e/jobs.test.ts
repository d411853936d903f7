/** Jobs on the real server (embedded mode): async operations, progress events, cancel, tenant isolation, signed webhooks. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { freePort } from '../../bench/lib/server-process.js';
import { packageRoot } from '../../src/core/version.js';
import { Api, createKey, longSpeech, shortSpeech, startReceiver, type Job } from '../helpers/jobs.js';
import { startServer, testKey, waitUntilReady, type ServerProcess } from '../helpers/server.js';

describe('jobs (embedded: SQLite + local disk, in-process worker)', () => {
  let server: ServerProcess;
  let admin: Api;
  let owner: Api;
  let other: Api;

  before(async () => {
    server = await startServer({
      VOXD_API_KEYS: testKey('jobs'),
      VOXD_WEBHOOK_ALLOW_PRIVATE: 'true',
      VOXD_WEBHOOK_RETRY_BASE_MS: '300',
      VOXD_RATE_LIMIT_PER_MINUTE: '100000',
      VOXD_LOG_LEVEL: 'warn',
    });
    await waitUntilReady(server.base);
    admin = new Api(server.base, testKey('jobs'));
    owner = new Api(server.base, await createKey(server.dataDir, 'owner', 'transcribe,tts,separate,vc'));
    other = new Api(server.base, await createKey(server.dataDir, 'other', 'transcribe,tts,separate,vc'));
  });
  after(async () => {
    server.child.kill('SIGKILL');
    await server.exited;
  });

  test('async transcription: 202 with Location, progress events until succeeded, the same result as the synchronous call', async () => {
    const accepted = await owner.postForm(
      '/v1/audio/transcribe',
      { async: 'true', response_format: 'verbose_json' },
      { audio: shortSpeech },
    );
    assert.equal(accepted.status, 202);
    const job = (await accepted.json()) as Job;
    assert.match(job.id, /^job_[0-9a-f]{32}$/);
    assert.equal(accepted.headers.get('location'), `/v1/jobs/${job.id}`);
    assert.equal(job.status, 'queued');
    assert.equal(job.operation, 'transcribe');

    const events = await owner.fetch(job.links.events);
    assert.equal(events.status, 200);
    assert.match(events.headers.get('content-type') ?? '', /^text\/event-stream/);
    const snapshots = (await events.text())
      .split('\n\n')
      .filter((frame) => frame.includes('event: job'))
      .map((frame) => JSON.parse(frame.split('data: ')[1]!) as Job);
    const last = snapshots.at(-1)!;
    assert.equal(last.status, 'succeeded');
    assert.ok(
      snapshots.some((s) => s.status === 'running'),
      'a running snapshot',
    );
    const fractions = snapshots.map((s) => s.progress?.fraction ?? 0);
    assert.deepEqual(
      fractions,
      [...fractions].sort((a, b) => a - b),
      'progress only grows',
    );

    const sync = await owner.postForm('/v1/audio/transcribe', { response_format: 'verbose_json' }, { audio: shortSpeech });
    assert.equal(sync.status, 200);
    assert.deepEqual(last.result, await sync.json());
    const metrics = await (await admin.fetch('/metrics')).text();
    assert.match(metrics, /voxd_jobs_settled_total\{operation="transcribe",status="succeeded"\} [1-9]/);
    assert.match(metrics, /voxd_job_queue_seconds_count\{operation="transcribe"\} [1-9]/);
  });

  test('async TTS gives a result file with the same audio as the synchronous call, and the engine headers', async () => {
    const body = { text: 'Jobs keep their results until they expire.', voice_id: 'af_heart', format: 'wav' };
    const accepted = await owner.postJson('/v1/audio/tts', { ...body, async: true });
    assert.equal(accepted.status, 202);
    const job = await owner.waitFor(((await accepted.json()) as Job).id);
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    const result = job.result as { url: string; content_type: string; bytes: number; headers: Record<string, string> };
    assert.equal(result.content_type, 'audio/wav');
    assert.equal(result.headers['x-voxd-engine'], 'kokoro');
    const file = Buffer.from(await (await owner.fetch(result.url)).arrayBuffer());
    assert.equal(file.length, result.bytes);
    const sync = Buffer.from(await (await owner.postJson('/v1/audio/tts', body)).arrayBuffer());
    assert.ok(sync.equals(file), 'same audio');
  });

  test('errors that need no engine come at submit time: unknown voice 404, bad webhook_url 400, undecodable audio 415', async () => {
    const voice = await owner.postJson('/v1/audio/tts', { text: 'Hello.', voice_id: 'voice_missing', async: true });
    assert.equal(voice.status, 404);
    assert.equal(((await voice.json()) as { error: { param: string } }).error.param, 'voice_id');
    const hook = await owner.postJson('/v1/audio/tts', { text: 'Hello.', voice_id: 'af_heart', webhook_url: 'ftp://example.com/x' });
    assert.equal(hook.status, 400);
    assert.equal(((await hook.json()) as { error: { param: string } }).error.param, 'webhook_url');
    const form = new FormData();
    form.append('async', 'true');
    form.append('audio', new Blob([Buffer.from('not audio at all')]), 'notes.txt');
    const audio = await owner.fetch('/v1/audio/transcribe', { method: 'POST', body: form });
    assert.equal(audio.status, 415);
    const listed = (await (await owner.fetch('/v1/jobs?status=failed')).json()) as { data: Job[] };
    assert.equal(listed.data.length, 0, 'nothing was queued');
  });

  test('cancel: a running job stops within 10 s, a queued one never runs', async () => {
    const long = await longSpeech(20);
    const running = (await (await owner.postForm('/v1/audio/transcribe', { async: 'true' }, { audio: long })).json()) as Job;
    const queued = (await (await owner.postForm('/v1/audio/transcribe', { async: 'true' }, { audio: long })).json()) as Job;
    await owner.waitFor(running.id, (job) => job.status === 'running' && (job.progress?.fraction ?? 0) > 0.02);

    const cancelQueued = await owner.fetch(`/v1/jobs/${queued.id}`, { method: 'DELETE' });
    assert.equal(cancelQueued.status, 200);
    assert.equal(((await cancelQueued.json()) as Job).status, 'cancelled');

    const startedAt = performance.now();
    assert.equal((await owner.fetch(`/v1/jobs/${running.id}`, { method: 'DELETE' })).status, 200);
    const stopped = await owner.waitFor(running.id);
    const seconds = (performance.now() - startedAt) / 1000;
    assert.equal(stopped.status, 'cancelled');
    assert.equal(stopped.error?.code, 'cancelled');
    // The in-process worker aborts at once (within an encoder pass); the 220 s of speech would take minutes to finish.
    assert.ok(seconds < 10, `stopped after ${seconds.toFixed(2)} s`);
    const never = await owner.job(queued.id);
    assert.equal(never.status, 'cancelled');
    assert.equal(never.started_at, null);
    assert.equal(never.attempts, 0);
  });

  test('another key cannot see, follow or cancel a job; an admin key can; the owner lists its own', async () => {
    const job = (await (await owner.postJson('/v1/audio/tts', { text: 'Private job.', voice_id: 'af_heart', async: true })).json()) as Job;
    for (const [method, route] of [
      ['GET', `/v1/jobs/${job.id}`],
      ['DELETE', `/v1/jobs/${job.id}`],
      ['GET', `/v1/jobs/${job.id}/events`],
    ] as const) {
      const response = await other.fetch(route, { method });
      assert.equal(response.status, 404, `${method} ${route}`);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'not_found');
    }
    const theirs = (await (await other.fetch('/v1/jobs')).json()) as { data: Job[] };
    assert.ok(!theirs.data.some((j) => j.id === job.id));
    assert.equal((await admin.fetch(`/v1/jobs/${job.id}`)).status, 200);
    const mine = (await (await owner.fetch('/v1/jobs?operation=tts&limit=1')).json()) as {
      data: Job[];
      has_more: boolean;
      next_cursor: string | null;
    };
    assert.equal(mine.data[0]?.id, job.id, 'newest first');
    assert.equal(mine.has_more, true);
    const next = (await (await owner.fetch(`/v1/jobs?operation=tts&limit=1&cursor=${mine.next_cursor}`)).json()) as { data: Job[] };
    assert.notEqual(next.data[0]?.id, job.id);
    await owner.waitFor(job.id);
  });

  test('webhook: signed per Standard Webhooks, retried after the receiver was down and then failing, one webhook-id, attempts on the job', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/hooks/voxd`;
    const accepted = await owner.postJson('/v1/audio/tts', { text: 'Call me back.', voice_id: 'af_heart', webhook_url: url });
    assert.equal(accepted.status, 202, 'webhook_url alone makes a job');
    const { id } = (await accepted.json()) as Job;
    // Nobody listens yet: the first attempt is refused.
    await owner.waitFor(id, (job) => (job.webhook?.deliveries[0]?.attempts.length ?? 0) >= 1, 60_000);
    const receiver = await startReceiver(port, [503]);
    try {
      const job = await owner.waitFor(id, (j) => j.webhook?.deliveries[0]?.status === 'delivered', 60_000);
      const delivery = job.webhook!.deliveries[0]!;
      assert.equal(delivery.attempts[0]!.status, null);
      assert.ok(delivery.attempts.some((a) => a.status === 503));
      assert.equal(delivery.attempts.at(-1)!.status, 204);
      assert.ok(receiver.received.length >= 2);
      const secret = ((await (await owner.fetch('/v1/webhook-secret')).json()) as { secret: string }).secret;
      for (const hit of receiver.received) {
        assert.equal(hit.headers['webhook-id'], delivery.id);
        const payload = new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>) as { type: string; data: Job };
        assert.equal(payload.type, 'job.succeeded');
        assert.equal(payload.data.id, id);
        assert.equal(payload.data.status, 'succeeded');
      }
      assert.throws(() =>
        new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(
          receiver.received[0]!.body,
          receiver.received[0]!.headers as Record<string, string>,
        ),
      );
    } finally {
      await receiver.close();
    }
  });

  test('rotating the webhook secret: new deliveries are signed with the new one', async () => {
    const before = ((await (await owner.fetch('/v1/webhook-secret')).json()) as { secret: string }).secret;
    const rotated = ((await (await owner.fetch('/v1/webhook-secret/rotate', { method: 'POST' })).json()) as { secret: string }).secret;
    assert.notEqual(rotated, before);
    const receiver = await startReceiver(await freePort());
    try {
      const { id } = (await (
        await owner.postJson('/v1/audio/tts', { text: 'Rotated.', voice_id: 'af_heart', webhook_url: receiver.url })
      ).json()) as Job;
      await owner.waitFor(id, (j) => j.webhook?.deliveries[0]?.status === 'delivered', 60_000);
      const hit = receiver.received[0]!;
      assert.ok(new Webhook(rotated).verify(hit.body, hit.headers as Record<string, string>));
      assert.throws(() => new Webhook(before).verify(hit.body, hit.headers as Record<string, string>));
    } finally {
      await receiver.close();
    }
  });

  test('voxd jobs wait|list|get|cancel talk to the server with --url and --key', async () => {
    const cli = (...args: string[]) =>
      promisify(execFile)(process.execPath, [
        path.join(packageRoot, 'dist/src/cli/main.js'),
        'jobs',
        ...args,
        '--url',
        server.base,
        '--key',
        owner.key,
      ]);
    const { id } = (await (
      await owner.postForm('/v1/audio/transcribe', { async: 'true', response_format: 'text' }, { audio: shortSpeech })
    ).json()) as Job;
    const waited = JSON.parse((await cli('wait', id)).stdout) as Job;
    assert.equal(waited.status, 'succeeded');
    assert.match((waited.result as { text: string }).text, /ask not what your country can do for you/);
    assert.match((await cli('list', '--operation', 'transcribe')).stdout, new RegExp(`^${id}\ttranscribe\tsucceeded`, 'm'));
    assert.equal((JSON.parse((await cli('get', id)).stdout) as Job).id, id);
    assert.match((await cli('cancel', id)).stdout, new RegExp(`^${id}\tsucceeded`));
    await assert.rejects(cli('get', 'job_missing'), /No job 'job_missing'/);
  });
});

/** Where webhooks may go: public unicast only by default, checked at submit and again on every connection. */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createServer } from 'node:http';
import { checkWebhookUrl, refusedRange } from '../../src/jobs/webhook-address.js';
import { retryDelayMilliseconds, WebhookSender } from '../../src/jobs/webhooks.js';
import { openSqliteStore } from '../../src/storage/sql/sqlite.js';
import { ApiKeyService } from '../../src/auth/api-keys.js';
import { makeTempDir } from '../helpers/app.js';
import { createLogger } from '../../src/core/logger.js';

describe('webhook addresses', () => {
  test('loopback, private, link-local, unique-local, mapped and unspecified addresses are refused; public ones pass', () => {
    for (const [address, range] of [
      ['127.0.0.1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['192.168.0.10', 'private'],
      ['172.16.5.4', 'private'],
      ['169.254.169.254', 'linkLocal'],
      ['100.64.0.1', 'carrierGradeNat'],
      ['0.0.0.0', 'unspecified'],
      ['::1', 'loopback'],
      ['fd00::1', 'uniqueLocal'],
      ['fe80::1', 'linkLocal'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['224.0.0.1', 'multicast'],
    ])
      assert.equal(refusedRange(address!), range, address);
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700::1111']) assert.equal(refusedRange(address), undefined, address);
  });

  test('checkWebhookUrl: http(s) only, no credentials, private hosts refused unless allowed', async () => {
    const strict = { allowPrivate: false };
    await assert.rejects(checkWebhookUrl('ftp://example.com/', strict), /http or https/);
    await assert.rejects(checkWebhookUrl('not a url', strict), /not an absolute URL/);
    await assert.rejects(checkWebhookUrl('https://user:pw@example.com/', strict), /credentials/);
    await assert.rejects(checkWebhookUrl('http://127.0.0.1:9/hook', strict), /loopback/);
    await assert.rejects(checkWebhookUrl('http://[::1]/hook', strict), /loopback/);
    await assert.rejects(checkWebhookUrl('http://localhost/hook', strict), /loopback/);
    await assert.rejects(checkWebhookUrl('http://169.254.169.254/latest/meta-data', strict), /linkLocal/);
    assert.equal((await checkWebhookUrl('http://127.0.0.1:9/hook', { allowPrivate: true })).port, '9');
  });

  test('retry delays double from the base, are capped at an hour, and carry +-20% jitter', () => {
    assert.equal(
      retryDelayMilliseconds(1, 5000, () => 0.5),
      5000,
    );
    assert.equal(
      retryDelayMilliseconds(3, 5000, () => 0.5),
      20000,
    );
    assert.equal(
      retryDelayMilliseconds(30, 5000, () => 0.5),
      3600_000,
    );
    assert.equal(
      retryDelayMilliseconds(2, 5000, () => 0),
      8000,
    );
    assert.equal(
      retryDelayMilliseconds(2, 5000, () => 1),
      12000,
    );
  });
});

describe('webhook sender with the default policy', () => {
  const dataDir = makeTempDir('webhooks');
  const store = openSqliteStore(dataDir);
  after(async () => store.close());

  test('a delivery to a loopback receiver is refused at connection time and never reaches it; the attempt is recorded', async () => {
    let hits = 0;
    const receiver = createServer((_request, response) => {
      hits++;
      response.end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as { port: number }).port;
    const { record: owner } = await new ApiKeyService(store.keys).create('owner', ['tts']);
    const now = new Date().toISOString();
    // A job settled with a webhook to a name that resolves to loopback (as a rebinding name would by delivery time).
    await store.jobs.insert({
      id: 'job_1',
      ownerKeyId: owner.id,
      operation: 'tts',
      route: 'tts',
      status: 'queued',
      params: {},
      inputs: [],
      inputSeconds: null,
      progress: null,
      result: null,
      error: null,
      webhookUrl: `http://localhost:${port}/hook`,
      attempts: 0,
      maxAttempts: 3,
      workerId: null,
      leaseExpiresAt: null,
      cancelRequested: false,
      createdAt: now,
      startedAt: null,
      finishedAt: null,
      expiresAt: now,
    });
    await store.jobs.finish('job_1', null, { status: 'cancelled' }, now, now, {
      id: 'msg_1',
      jobId: 'job_1',
      ownerKeyId: owner.id,
      url: `http://localhost:${port}/hook`,
      event: 'job.cancelled',
      payload: '{}',
      status: 'pending',
      attempts: [],
      nextAttemptAt: now,
      createdAt: now,
    });
    const sender = new WebhookSender({
      store,
      policy: { allowPrivate: false },
      retryBaseMilliseconds: 60_000,
      retryWindowSeconds: 3600,
      timeoutMilliseconds: 2000,
      log: createLogger('silent'),
      pollMilliseconds: 50,
    });
    sender.start();
    try {
      for (let i = 0; i < 100 && (await store.webhooks.forJob('job_1'))[0]!.attempts.length === 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await sender.stop();
      receiver.close();
    }
    const [delivery] = await store.webhooks.forJob('job_1');
    assert.equal(delivery!.attempts.length, 1);
    assert.equal(delivery!.attempts[0]!.status, null);
    assert.match(delivery!.attempts[0]!.error ?? '', /may not reach/);
    assert.equal(delivery!.status, 'pending');
    assert.equal(hits, 0);
  });
});

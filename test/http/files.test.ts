import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.js';

describe('result files', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ VOXD_FILE_TTL_SECONDS: '60' });
  });
  after(async () => t.close());

  test('owner downloads; another key gets 404; expired files are deleted with their blob', async () => {
    const owner = await t.container.apiKeys.create('owner', ['separate']);
    const scratch = t.container.scratch.path('.wav');
    writeFileSync(scratch, Buffer.from('RIFF....fake stem bytes'));
    const record = await t.container.files.keep(owner.record, scratch, 'dialogue.wav', 'audio/wav');
    const url = `/v1/audio/files/${record.id}`;
    const ok = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${owner.key}` } });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.body, 'RIFF....fake stem bytes');
    assert.match(ok.headers['content-disposition'] as string, /dialogue\.wav/);
    const other = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${await t.keyWith(['separate'])}` } });
    assert.equal(other.statusCode, 404);
    assert.equal(other.json().error.code, 'not_found');
    assert.equal(await t.container.store.blobs.exists(record.blobKey), true);
    assert.equal(await t.container.files.sweep(new Date(Date.now() + 61_000)), 1);
    assert.equal(await t.container.store.blobs.exists(record.blobKey), false);
    const gone = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${owner.key}` } });
    assert.equal(gone.statusCode, 404);
  });
});

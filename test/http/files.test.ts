import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.js';

describe('result files', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ VOXD_FILE_TTL_SECONDS: '60' });
  });
  after(async () => t.close());

  test('owner downloads; another key gets 404; expired files are deleted with their blob', async () => {
    const owner = t.container.apiKeys.create('owner', ['separate']);
    const scratch = t.container.store.blobs.tempPath('.wav');
    writeFileSync(scratch, Buffer.from('RIFF....fake stem bytes'));
    const record = await t.container.files.keep(owner.record, scratch, 'dialogue.wav', 'audio/wav');
    const url = `/v1/audio/files/${record.id}`;
    const ok = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${owner.key}` } });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.body, 'RIFF....fake stem bytes');
    assert.match(ok.headers['content-disposition'] as string, /dialogue\.wav/);
    const other = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${t.keyWith(['separate'])}` } });
    assert.equal(other.statusCode, 404);
    assert.equal(other.json().error.code, 'not_found');
    const blobPath = t.container.store.blobs.pathOf(record.blobKey);
    assert.equal(await t.container.files.sweep(new Date(Date.now() + 61_000)), 1);
    assert.equal(existsSync(blobPath), false);
    const gone = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${owner.key}` } });
    assert.equal(gone.statusCode, 404);
  });
});

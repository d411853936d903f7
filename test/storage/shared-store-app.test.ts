/**
 * The real app configured for scale-out (VOXD_DATABASE_URL + an s3:// VOXD_BLOB_URL): two nodes, each with its own data
 * dir, share keys, result files and voices through PostgreSQL and SeaweedFS started here.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, createVoice, evalDir, type TestApp } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';
import { startPostgres } from '../helpers/postgres.js';
import { startSeaweedfs } from '../helpers/seaweedfs.js';

describe('two nodes on PostgreSQL + S3', () => {
  let postgres: Awaited<ReturnType<typeof startPostgres>>;
  let s3: Awaited<ReturnType<typeof startSeaweedfs>>;
  let first: TestApp;
  let second: TestApp;

  before(async () => {
    [postgres, s3] = await Promise.all([
      startPostgres(),
      startSeaweedfs(),
      modelFile('silero-vad', 'silero_vad.onnx'),
      modelFile('resemblyzer-ge2e', 'ge2e.onnx'),
    ]);
    process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
    const env = { VOXD_DATABASE_URL: postgres.url, VOXD_BLOB_URL: `s3://${s3.bucket}/voxd`, VOXD_S3_ENDPOINT: s3.endpoint };
    [first, second] = await Promise.all([buildTestApp(env), buildTestApp(env)]);
  });
  after(async () => {
    try {
      await first?.close();
      await second?.close();
    } finally {
      await Promise.all([postgres?.stop(), s3?.stop()]);
    }
  });

  test('a key made on one node works on the other; a result file kept on one downloads from the other', async () => {
    const owner = await first.container.apiKeys.create('owner', ['separate']);
    const scratch = first.container.scratch.path('.wav');
    writeFileSync(scratch, Buffer.from('RIFF....stem bytes'));
    const record = await first.container.files.keep(owner.record, scratch, 'dialogue.wav', 'audio/wav');
    const download = await second.app.inject({
      method: 'GET',
      url: `/v1/audio/files/${record.id}`,
      headers: { authorization: `Bearer ${owner.key}` },
    });
    assert.equal(download.statusCode, 200, download.body);
    assert.equal(download.body, 'RIFF....stem bytes');
  });

  test('a voice created on one node is read, used and deleted on the other; nothing of it stays in the bucket', async () => {
    const clip = (name: string) => ({
      filename: name,
      content: readFileSync(path.join(evalDir, 'vc/resemblyzer_librispeech', name)),
      contentType: 'audio/wav',
    });
    const { voice_id: voiceId } = await createVoice(first, { name: 'Shared reader', language: 'en' }, [
      clip('3080-5032-0001.wav'),
      clip('3080-5032-0004.wav'),
    ]);

    const auth = { authorization: `Bearer ${first.key}` };
    const got = await second.app.inject({ method: 'GET', url: `/v1/voices/${voiceId}`, headers: auth });
    assert.equal(got.json().name, 'Shared reader');
    const record = (await second.container.store.voices.get(voiceId))!;
    const clips = await second.container.voices.referenceClips(record);
    assert.equal(clips.length, 2, 'the reference clips are read from the bucket by the other node');
    assert.deepEqual(await second.container.voices.removeOrphans(), [], 'a complete voice is no orphan');

    const deleted = await second.app.inject({ method: 'DELETE', url: `/v1/voices/${voiceId}`, headers: auth });
    assert.equal(deleted.statusCode, 200);
    assert.equal((await first.app.inject({ method: 'GET', url: `/v1/voices/${voiceId}`, headers: auth })).statusCode, 404);
    assert.deepEqual(await first.container.store.blobs.list(record.blobPrefix), []);
  });
});

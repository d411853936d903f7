import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ApiKeyService, parseScopes } from '../src/auth/api-keys.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { openSqliteStore } from '../src/storage/sql/sqlite.js';
import { makeTempDir } from './helpers/app.js';

describe('configuration', () => {
  test('defaults', () => {
    const config = loadConfig({});
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 8080);
    assert.equal(config.dataDir, path.resolve('./data'));
    assert.equal(config.modelsDir, path.join(homedir(), '.cache', 'voxd', 'models'));
    assert.equal(config.maxUploadBytes, 100 * 1024 * 1024);
    assert.equal(config.maxAudioSeconds, 7200);
    assert.equal(config.shutdownGraceSeconds, 30);
    assert.equal(config.metricsPublic, false);
    assert.equal(config.asrEncoder, 'onnx');
    assert.equal(loadConfig({ VOXD_ASR_ENCODER: 'ggml' }).asrEncoder, 'ggml');
    assert.equal(loadConfig({ VOXD_ASR_ENCODER: 'onnx-int8' }).asrEncoder, 'onnx-int8');
    assert.deepEqual(config.modelMirrors, []);
    assert.deepEqual(
      loadConfig({ VOXD_MODEL_MIRRORS: 'https://huggingface.co/=http://mirror.lan/hf/, https://a.example/x/=https://b.example/y/' })
        .modelMirrors,
      [
        { from: 'https://huggingface.co/', to: 'http://mirror.lan/hf/' },
        { from: 'https://a.example/x/', to: 'https://b.example/y/' },
      ],
    );
    assert.ok(Object.isFrozen(config));
  });

  test('invalid values stop the start with a message naming the variable', () => {
    for (const [name, value] of [
      ['VOXD_PORT', '70000'],
      ['VOXD_PORT', 'abc'],
      ['VOXD_MAX_UPLOAD_MB', '0'],
      ['VOXD_MAX_AUDIO_SECONDS', '1.5'],
      ['VOXD_API_KEYS', 'secret'],
      ['VOXD_PRELOAD_MODELS', 'maybe'],
      ['VOXD_SHUTDOWN_GRACE_SECONDS', '-1'],
      ['VOXD_SHUTDOWN_GRACE_SECONDS', '2.5'],
      ['VOXD_ASR_ENCODER', 'cuda'],
      ['VOXD_MODEL_MIRRORS', 'https://huggingface.co/'],
      ['VOXD_MODEL_MIRRORS', 'https://huggingface.co/=/srv/mirror'],
    ]) {
      assert.throws(
        () => loadConfig({ [name!]: value }),
        (error: Error) => error instanceof ConfigError && error.message.includes(name!),
      );
    }
  });

  test('storage: SQLite and the data dir by default; Postgres, S3 and shared-directory URLs are parsed and checked', () => {
    const defaults = loadConfig({ VOXD_DATA_DIR: '/srv/voxd' });
    assert.equal(defaults.databaseUrl, null);
    assert.deepEqual(defaults.blobs, { kind: 'disk', dir: '/srv/voxd/blobs' });
    assert.equal(loadConfig({ VOXD_DATABASE_URL: 'postgres://voxd:pw@db:5432/voxd' }).databaseUrl, 'postgres://voxd:pw@db:5432/voxd');
    assert.deepEqual(loadConfig({ VOXD_BLOB_URL: 'file:///mnt/shared/voxd' }).blobs, { kind: 'disk', dir: '/mnt/shared/voxd' });
    assert.deepEqual(loadConfig({ VOXD_BLOB_URL: 's3://voxd-blobs/prod/eu/', VOXD_S3_ENDPOINT: 'http://127.0.0.1:8333' }).blobs, {
      kind: 's3',
      bucket: 'voxd-blobs',
      prefix: 'prod/eu',
      endpoint: 'http://127.0.0.1:8333',
      region: 'us-east-1',
      forcePathStyle: true,
    });
    assert.deepEqual(loadConfig({ VOXD_BLOB_URL: 's3://voxd-blobs', VOXD_S3_REGION: 'eu-west-1' }).blobs, {
      kind: 's3',
      bucket: 'voxd-blobs',
      prefix: '',
      endpoint: null,
      region: 'eu-west-1',
      forcePathStyle: false,
    });
    for (const [env, name] of [
      [{ VOXD_DATABASE_URL: 'mysql://db/voxd' }, 'VOXD_DATABASE_URL'],
      [{ VOXD_DATABASE_URL: 'not a url' }, 'VOXD_DATABASE_URL'],
      [{ VOXD_BLOB_URL: 's3://Bad_Bucket/x' }, 'VOXD_BLOB_URL'],
      [{ VOXD_BLOB_URL: 'gs://bucket/x' }, 'VOXD_BLOB_URL'],
      [{ VOXD_BLOB_URL: 'file://host/dir' }, 'VOXD_BLOB_URL'],
      [{ VOXD_BLOB_URL: '/relative/without/scheme' }, 'VOXD_BLOB_URL'],
      [{ VOXD_BLOB_URL: 's3://voxd-blobs/x', VOXD_S3_ENDPOINT: 'ftp://host' }, 'VOXD_S3_ENDPOINT'],
      [{ VOXD_S3_ENDPOINT: 'http://127.0.0.1:8333' }, 'VOXD_S3_ENDPOINT'],
      [{ VOXD_BLOB_URL: 's3://voxd-blobs/x', VOXD_S3_FORCE_PATH_STYLE: 'sometimes' }, 'VOXD_S3_FORCE_PATH_STYLE'],
    ] as const) {
      assert.throws(
        () => loadConfig(env),
        (error: Error) => error instanceof ConfigError && error.message.includes(name),
        JSON.stringify(env),
      );
    }
  });
});

describe('API keys', () => {
  test('created keys verify; only their hash is stored; revoked keys fail; bootstrap keys get every scope; each key has a webhook secret', async () => {
    const store = openSqliteStore(makeTempDir('keys'));
    const keys = new ApiKeyService(store.keys);
    const { key, record } = await keys.create('ci', ['transcribe']);
    assert.match(key, /^vx_[A-Za-z0-9_-]{43}$/);
    assert.match(record.webhookSecret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal((await keys.verify(key))?.id, record.id);
    assert.ok(!JSON.stringify(await store.keys.list()).includes(key.slice(3)));
    assert.ok((await keys.verify(key))?.lastUsedAt);
    const rotated = await keys.rotateWebhookSecret(record.id);
    assert.notEqual(rotated, record.webhookSecret);
    assert.equal((await keys.verify(key))?.webhookSecret, rotated);
    await keys.revoke(record.id);
    assert.equal(await keys.verify(key), undefined);
    await assert.rejects(keys.revoke('key_missing'), /No API key/);
    const bootstrap = `vx_${'b'.repeat(43)}`;
    await keys.seed([bootstrap]);
    await keys.seed([bootstrap]);
    assert.deepEqual((await keys.verify(bootstrap))?.scopes, ['tts', 'vc', 'separate', 'transcribe', 'dub', 'voices', 'metrics', 'admin']);
    assert.equal((await keys.list()).length, 2);
    assert.throws(() => parseScopes('tts,root'), /Unknown scope 'root'/);
    assert.deepEqual(parseScopes('metrics'), ['metrics']);
    await store.close();
  });
});

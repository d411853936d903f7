/**
 * One contract, every store: the same tests run on the embedded store (SQLite + a directory) and on the scale-out one
 * (PostgreSQL + S3 on SeaweedFS, both real servers started here). Each test gets an empty store; a second handle on the
 * same data plays another process.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { text } from 'node:stream/consumers';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.js';
import { localScratch } from '../../src/storage/scratch.js';
import { openStore } from '../../src/storage/open.js';
import type { Scratch, Store } from '../../src/storage/store.js';
import type {
  ApiKeyRecord,
  JobRecord,
  Operation,
  PronunciationDictionaryRecord,
  VoicePurpose,
  VoiceRecord,
  WebhookDeliveryRecord,
} from '../../src/core/records.js';
import { makeTempDir } from '../helpers/app.js';
import { startPostgres } from '../helpers/postgres.js';
import { startSeaweedfs } from '../helpers/seaweedfs.js';

interface Backend {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The environment of a fresh, empty store (its own database and blob location). */
  freshEnv(): Promise<Record<string, string>>;
  /** Runs SQL on the store's database directly (as rows written by an older version). */
  execute(config: Config, sql: string): Promise<void>;
}

const sqliteBackend: Backend = {
  name: 'SQLite + disk',
  start: async () => undefined,
  stop: async () => undefined,
  freshEnv: async () => ({}),
  execute: async (config, sql) => {
    const db = new Database(path.join(config.dataDir, 'voxd.sqlite'));
    try {
      db.exec(sql);
    } finally {
      db.close();
    }
  },
};

function postgresS3Backend(): Backend {
  let postgres: Awaited<ReturnType<typeof startPostgres>> | undefined;
  let s3: Awaited<ReturnType<typeof startSeaweedfs>> | undefined;
  return {
    name: 'PostgreSQL + S3 (SeaweedFS)',
    start: async () => {
      [postgres, s3] = await Promise.all([startPostgres(), startSeaweedfs()]);
      // The SDK's default credential chain, as in production.
      process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
      process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
    },
    stop: async () => {
      await Promise.all([postgres?.stop(), s3?.stop()]);
    },
    freshEnv: async () => {
      const name = `contract_${randomUUID().replaceAll('-', '')}`;
      const admin = new pg.Client({ connectionString: postgres!.url });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      const url = new URL(postgres!.url);
      url.pathname = `/${name}`;
      return { VOXD_DATABASE_URL: url.toString(), VOXD_BLOB_URL: `s3://${s3!.bucket}/${name}`, VOXD_S3_ENDPOINT: s3!.endpoint };
    },
    execute: async (config, sql) => {
      const client = new pg.Client({ connectionString: config.databaseUrl! });
      await client.connect();
      try {
        await client.query(sql);
      } finally {
        await client.end();
      }
    },
  };
}

const base = Date.parse('2030-01-01T00:00:00.000Z');
/** A time `seconds` after a fixed start, as the interface carries it. */
const at = (seconds: number): string => new Date(base + seconds * 1000).toISOString();

function keyRecord(id: string, createdAt: string): ApiKeyRecord {
  return {
    id,
    name: `name-${id}`,
    hash: `hash-${id}`,
    prefix: `vx_${id}`,
    scopes: ['tts', 'transcribe'],
    createdAt,
    lastUsedAt: null,
    revokedAt: null,
    webhookSecret: `whsec_${id}`,
  };
}

function jobRecord(id: string, createdAt: string, changes: Partial<JobRecord> = {}): JobRecord {
  return {
    id,
    ownerKeyId: 'key_a',
    operation: 'transcribe',
    route: 'native',
    status: 'queued',
    params: { language: 'en', diarize: true },
    inputs: [{ field: 'audio', blobKey: `jobs/${id}/audio-0`, filename: 'talk.wav', bytes: 1234 }],
    inputSeconds: 12.5,
    progress: null,
    result: null,
    error: null,
    webhookUrl: 'http://127.0.0.1:9/hook',
    attempts: 0,
    maxAttempts: 3,
    workerId: null,
    leaseExpiresAt: null,
    cancelRequested: false,
    createdAt,
    startedAt: null,
    finishedAt: null,
    expiresAt: at(86_400),
    ...changes,
  };
}

function delivery(id: string, jobId: string, nextAttemptAt: string): WebhookDeliveryRecord {
  return {
    id,
    jobId,
    ownerKeyId: 'key_a',
    url: 'http://127.0.0.1:9/hook',
    event: 'job.succeeded',
    payload: `{"type":"job.succeeded","job":"${jobId}"}`,
    status: 'pending',
    attempts: [],
    nextAttemptAt,
    createdAt: at(0),
  };
}

for (const backend of [sqliteBackend, postgresS3Backend()]) {
  describe(`store contract: ${backend.name}`, { concurrency: false }, () => {
    const cleanups: Array<() => Promise<void>> = [];
    let store: Store;
    let scratch: Scratch;
    /** Another handle on the same data, as a second process would hold. */
    let other: Store;
    let work: string;
    let config: Config;

    before(() => backend.start());
    after(async () => {
      try {
        for (const cleanup of cleanups.reverse()) await cleanup();
      } finally {
        await backend.stop();
      }
    });

    /** Runs `body` on a fresh, empty store. */
    const fresh = (body: () => Promise<void>) => async () => {
      const dataDir = makeTempDir('contract');
      config = loadConfig({ VOXD_DATA_DIR: dataDir, ...(await backend.freshEnv()) });
      // Opened together on an empty database, as processes starting at once: each migration runs once.
      const handles = await Promise.all([openStore(config), openStore(config)]);
      [store, other] = handles as [Store, Store];
      scratch = localScratch(path.join(dataDir, 'tmp'));
      work = path.join(dataDir, 'work');
      mkdirSync(work);
      cleanups.push(async () => {
        for (const handle of handles) await handle.close();
        rmSync(dataDir, { recursive: true, force: true });
      });
      await body();
    };

    /** A job with a webhook delivery (pending, due at `due`), settled as a cancelled queued job is. */
    const settledWithDelivery = async (jobId: string, deliveryId: string, due: string) => {
      await store.jobs.insert(jobRecord(jobId, at(0)));
      assert.ok(await store.jobs.finish(jobId, null, { status: 'cancelled' }, at(1), at(100), delivery(deliveryId, jobId, due)));
    };

    test(
      'keys: insert, find by hash, get, list in creation order, revoke once, touch, webhook secret',
      fresh(async () => {
        await store.keys.insert(keyRecord('key_b', at(2)));
        await store.keys.insert(keyRecord('key_a', at(1)));
        assert.deepEqual(await store.keys.findByHash('hash-key_b'), keyRecord('key_b', at(2)));
        assert.equal(await store.keys.findByHash('hash-missing'), undefined);
        assert.deepEqual(await other.keys.get('key_a'), keyRecord('key_a', at(1)));
        assert.equal(await store.keys.get('key_missing'), undefined);
        assert.deepEqual(
          (await store.keys.list()).map((key) => key.id),
          ['key_a', 'key_b'],
        );
        await assert.rejects(store.keys.insert(keyRecord('key_a', at(3))), 'ids are unique');

        assert.equal(await store.keys.revoke('key_a', at(10)), true);
        assert.equal(await store.keys.revoke('key_a', at(20)), true);
        assert.equal((await store.keys.get('key_a'))?.revokedAt, at(10), 'the first revocation time stays');
        assert.equal(await store.keys.revoke('key_missing', at(10)), false);
        await store.keys.touch('key_b', at(30));
        assert.equal((await store.keys.get('key_b'))?.lastUsedAt, at(30));
        assert.equal(await store.keys.setWebhookSecret('key_b', 'whsec_rotated'), true);
        assert.equal((await store.keys.findByHash('hash-key_b'))?.webhookSecret, 'whsec_rotated');
        assert.equal(await store.keys.setWebhookSecret('key_missing', 'whsec_x'), false);
      }),
    );

    test(
      'files: insert, get, expired, delete',
      fresh(async () => {
        const file = (id: string, expiresAt: string) => ({
          id,
          ownerKeyId: 'key_a',
          name: `${id}.wav`,
          contentType: 'audio/wav',
          bytes: 5_000_000_000,
          blobKey: `files/${id}`,
          createdAt: at(0),
          expiresAt,
        });
        await store.files.insert(file('file_old', at(10)));
        await store.files.insert(file('file_new', at(1000)));
        assert.deepEqual(await other.files.get('file_old'), file('file_old', at(10)));
        assert.equal(await store.files.get('file_missing'), undefined);
        assert.deepEqual(
          (await store.files.expired(at(10))).map((f) => f.id),
          ['file_old'],
        );
        await store.files.delete('file_old');
        assert.equal(await store.files.get('file_old'), undefined);
        assert.deepEqual(await store.files.expired(at(10_000)), [file('file_new', at(1000))]);
      }),
    );

    test(
      'voices: insert, get, list, update, delete',
      fresh(async () => {
        const voice = (id: string, createdAt: string, purpose: VoicePurpose = 'speech'): VoiceRecord => ({
          id,
          ownerKeyId: 'key_a',
          name: `Voice ${id}`,
          languages: ['en', 'de'],
          genderEstimate: null,
          description: 'warm',
          labels: { accent: 'scottish' },
          referenceSeconds: 31.25,
          engine: 'kokoro',
          createdAt,
          blobPrefix: `voices/${id}`,
          analysis: { embedding: [0.5, -0.25], stats: { f0: 180.5 } },
          purpose,
        });
        await store.voices.insert(voice('voice_2', at(2)));
        await store.voices.insert(voice('voice_1', at(1), 'identify'));
        assert.deepEqual(await other.voices.get('voice_1'), voice('voice_1', at(1), 'identify'));
        assert.equal((await other.voices.get('voice_2'))?.purpose, 'speech');
        assert.equal(await store.voices.get('voice_missing'), undefined);
        assert.deepEqual(
          (await store.voices.list()).map((v) => v.id),
          ['voice_1', 'voice_2'],
        );
        const updated = await store.voices.update('voice_1', { name: 'Renamed', labels: { accent: 'irish' } });
        assert.deepEqual(updated, { ...voice('voice_1', at(1), 'identify'), name: 'Renamed', labels: { accent: 'irish' } });
        assert.deepEqual(await store.voices.get('voice_1'), updated);
        assert.equal(await store.voices.update('voice_missing', { name: 'x' }), undefined);
        assert.equal(await store.voices.delete('voice_1'), true);
        assert.equal(await store.voices.delete('voice_1'), false);
        assert.deepEqual(
          (await store.voices.list()).map((v) => v.id),
          ['voice_2'],
        );
      }),
    );

    test(
      'pronunciation dictionaries: insert, get, list, update (rules kept in order), delete',
      fresh(async () => {
        const rules = [
          { kind: 'phoneme', graphemes: ['Zork'], phonemes: 'bɹɛd', alphabet: 'ipa', language: 'en-US' },
          { kind: 'alias', graphemes: ['W3C', 'W3c'], alias: 'World Wide Web Consortium', language: 'en' },
        ];
        const dictionary = (id: string, createdAt: string): PronunciationDictionaryRecord => ({
          id,
          ownerKeyId: 'key_a',
          name: `Dictionary ${id}`,
          rules,
          createdAt,
        });
        await store.pronunciationDictionaries.insert(dictionary('pdict_2', at(2)));
        await store.pronunciationDictionaries.insert(dictionary('pdict_1', at(1)));
        assert.deepEqual(await other.pronunciationDictionaries.get('pdict_2'), dictionary('pdict_2', at(2)));
        assert.equal(await store.pronunciationDictionaries.get('pdict_missing'), undefined);
        assert.deepEqual(
          (await store.pronunciationDictionaries.list()).map((d) => d.id),
          ['pdict_1', 'pdict_2'],
        );
        const reordered = [rules[1]!, rules[0]!];
        const updated = await store.pronunciationDictionaries.update('pdict_1', { name: 'Renamed', rules: reordered });
        assert.deepEqual(updated, { ...dictionary('pdict_1', at(1)), name: 'Renamed', rules: reordered });
        assert.deepEqual(await other.pronunciationDictionaries.get('pdict_1'), updated);
        assert.equal(await store.pronunciationDictionaries.update('pdict_missing', { name: 'x' }), undefined);
        assert.equal(await store.pronunciationDictionaries.delete('pdict_1'), true);
        assert.equal(await store.pronunciationDictionaries.delete('pdict_1'), false);
        assert.deepEqual(
          (await store.pronunciationDictionaries.list()).map((d) => d.id),
          ['pdict_2'],
        );
      }),
    );

    test(
      'voices: a profile stored before purposes existed is a voice to speak in, its analysis untouched (no CAM++ embedding yet)',
      fresh(async () => {
        // The columns of the voices table before the purpose migration.
        await backend.execute(
          config,
          `INSERT INTO voices (id, owner_key_id, name, languages, gender_estimate, description, labels, reference_seconds, engine, created_at, blob_prefix, analysis)
          VALUES ('voice_old', 'key_a', 'Old', '["en"]', 'female', '', '{}', 12.5, 'clone', '${at(1)}', 'voices/voice_old', '{"speaker":{"embedding":[0.5,-0.25],"model":"resemblyzer-ge2e"}}')`,
        );
        const old = await store.voices.get('voice_old');
        assert.equal(old?.purpose, 'speech');
        assert.deepEqual(old?.analysis, { speaker: { embedding: [0.5, -0.25], model: 'resemblyzer-ge2e' } });
      }),
    );

    test(
      'jobs: a record round-trips whole (result keys in their order); claim takes the oldest queued job of the operations asked for',
      fresh(async () => {
        const result = { text: 'hello', segments: [{ start: 0, end: 1.5, text: 'hello' }], language: 'en', duration: 1.5 };
        const done = jobRecord('job_done', at(0), {
          status: 'succeeded',
          result,
          progress: { stage: 'done', fraction: 1 },
          finishedAt: at(5),
          attempts: 1,
        });
        await store.jobs.insert(done);
        const read = await other.jobs.get('job_done');
        assert.deepEqual(read, done);
        assert.equal(JSON.stringify(read?.result), JSON.stringify(result));
        assert.equal(await store.jobs.get('job_missing'), undefined);

        await store.jobs.insert(jobRecord('job_tts', at(1), { operation: 'tts' }));
        await store.jobs.insert(jobRecord('job_second', at(3)));
        await store.jobs.insert(jobRecord('job_first', at(2)));
        const { claimed, abandoned } = await store.jobs.claim(['transcribe', 'separate'], 'worker_a', at(10), at(40));
        assert.deepEqual(abandoned, []);
        assert.deepEqual(claimed, {
          ...jobRecord('job_first', at(2)),
          status: 'running',
          workerId: 'worker_a',
          leaseExpiresAt: at(40),
          attempts: 1,
          startedAt: at(10),
        });
        assert.deepEqual(await store.jobs.get('job_first'), claimed);
        assert.equal((await store.jobs.claim(['transcribe'], 'worker_a', at(10), at(40))).claimed?.id, 'job_second');
        assert.equal((await store.jobs.claim(['transcribe'], 'worker_a', at(10), at(40))).claimed, undefined);
        assert.equal((await store.jobs.claim(['vc', 'tts'], 'worker_a', at(10), at(40))).claimed?.id, 'job_tts');
      }),
    );

    test(
      'jobs: two claimers at once (two handles, as two processes) get every job exactly once',
      fresh(async () => {
        const count = 24;
        for (let index = 0; index < count; index++)
          await store.jobs.insert(
            jobRecord(`job_${String(index).padStart(2, '0')}`, at(index), { operation: index % 2 === 0 ? 'transcribe' : 'tts' }),
          );
        const claimer = async (handle: Store, workerId: string) => {
          const ids: string[] = [];
          for (;;) {
            const { claimed } = await handle.jobs.claim(['transcribe', 'tts'], workerId, at(100), at(200));
            if (!claimed) return ids;
            assert.equal(claimed.workerId, workerId);
            ids.push(claimed.id);
          }
        };
        const [a, b] = await Promise.all([claimer(store, 'worker_a'), claimer(other, 'worker_b')]);
        const all = [...a, ...b];
        assert.equal(all.length, count);
        assert.equal(new Set(all).size, count);
        for (const job of await store.jobs.list({ limit: 100 })) assert.equal(job.attempts, 1);
      }),
    );

    test(
      'jobs: an expired lease makes a running job claimable again (attempts + 1); out of attempts or cancelled, it is abandoned instead',
      fresh(async () => {
        await store.jobs.insert(jobRecord('job_retry', at(0), { maxAttempts: 2 }));
        await store.jobs.claim(['transcribe'], 'worker_a', at(10), at(40));
        assert.equal((await other.jobs.claim(['transcribe'], 'worker_b', at(39), at(70))).claimed, undefined, 'the lease still holds');
        const retaken = (await other.jobs.claim(['transcribe'], 'worker_b', at(40), at(70))).claimed;
        assert.deepEqual(
          { id: retaken?.id, attempts: retaken?.attempts, workerId: retaken?.workerId, startedAt: retaken?.startedAt },
          { id: 'job_retry', attempts: 2, workerId: 'worker_b', startedAt: at(10) },
        );
        assert.deepEqual(
          await store.jobs.heartbeat('job_retry', 'worker_a', at(100), null),
          { owned: false, cancelRequested: false },
          'the old worker lost it',
        );

        const { claimed, abandoned } = await store.jobs.claim(['transcribe'], 'worker_c', at(70), at(100));
        assert.equal(claimed, undefined);
        assert.deepEqual(
          abandoned.map((job) => [job.id, job.status, job.attempts, job.workerId]),
          [['job_retry', 'running', 2, 'worker_b']],
        );
        assert.deepEqual((await store.jobs.claim(['tts'], 'worker_c', at(70), at(100))).abandoned, [], 'only the operations asked for');
        const failed = await store.jobs.finish(
          'job_retry',
          'worker_b',
          { status: 'failed', error: { code: 'internal', type: 'server_error', message: 'interrupted twice', param: null } },
          at(71),
          at(1000),
          undefined,
        );
        assert.equal(failed?.status, 'failed');
        assert.deepEqual((await store.jobs.claim(['transcribe'], 'worker_c', at(80), at(100))).abandoned, []);

        await store.jobs.insert(jobRecord('job_cancelled', at(1)));
        await store.jobs.claim(['transcribe'], 'worker_a', at(100), at(130));
        await store.jobs.requestCancel('job_cancelled');
        const later = await other.jobs.claim(['transcribe'], 'worker_b', at(130), at(160));
        assert.equal(later.claimed, undefined, 'a cancelled job is not run again');
        assert.deepEqual(
          later.abandoned.map((job) => [job.id, job.cancelRequested, job.attempts]),
          [['job_cancelled', true, 1]],
        );
      }),
    );

    test(
      'jobs: heartbeat extends the lease and records progress for the owner only, and reports a cancel request',
      fresh(async () => {
        await store.jobs.insert(jobRecord('job_1', at(0)));
        await store.jobs.claim(['transcribe'], 'worker_a', at(10), at(40));
        assert.deepEqual(await store.jobs.heartbeat('job_1', 'worker_a', at(60), { stage: 'transcribing', fraction: 0.25 }), {
          owned: true,
          cancelRequested: false,
        });
        assert.deepEqual(await store.jobs.heartbeat('job_1', 'worker_a', at(70), null), { owned: true, cancelRequested: false });
        const job = await store.jobs.get('job_1');
        assert.deepEqual(
          [job?.leaseExpiresAt, job?.progress],
          [at(70), { stage: 'transcribing', fraction: 0.25 }],
          'null progress keeps the last one',
        );
        assert.equal((await other.jobs.claim(['transcribe'], 'worker_b', at(60), at(90))).claimed, undefined, 'the extended lease holds');
        assert.deepEqual(await store.jobs.heartbeat('job_1', 'worker_b', at(80), null), { owned: false, cancelRequested: false });
        assert.deepEqual(await store.jobs.heartbeat('job_missing', 'worker_a', at(80), null), { owned: false, cancelRequested: false });

        const marked = await other.jobs.requestCancel('job_1');
        assert.deepEqual([marked?.status, marked?.cancelRequested], ['running', true]);
        assert.deepEqual(await store.jobs.heartbeat('job_1', 'worker_a', at(80), null), { owned: true, cancelRequested: true });
      }),
    );

    test(
      'jobs: finish settles once, by the owner (or a queued job, without a worker), with its webhook delivery in the same step',
      fresh(async () => {
        await store.jobs.insert(jobRecord('job_1', at(0)));
        await store.jobs.claim(['transcribe'], 'worker_a', at(10), at(40));
        const outcome = { status: 'succeeded' as const, result: { text: 'hi' } };
        assert.equal(
          await store.jobs.finish('job_1', 'worker_b', outcome, at(20), at(500), delivery('msg_x', 'job_1', at(20))),
          undefined,
          'not the owner',
        );
        assert.equal(
          await store.jobs.finish('job_1', null, outcome, at(20), at(500), undefined),
          undefined,
          'running: only its worker settles it',
        );
        assert.deepEqual(await store.webhooks.forJob('job_1'), [], 'no delivery without the final state');

        // Both handles settle at once: exactly one wins, and one delivery exists.
        const attempts = await Promise.all(
          [store, other].map((handle) =>
            handle.jobs.finish('job_1', 'worker_a', outcome, at(20), at(500), delivery('msg_1', 'job_1', at(20))),
          ),
        );
        const settled = attempts.filter((job) => job !== undefined);
        assert.equal(settled.length, 1);
        assert.deepEqual(settled[0], {
          ...jobRecord('job_1', at(0)),
          status: 'succeeded',
          result: { text: 'hi' },
          attempts: 1,
          startedAt: at(10),
          finishedAt: at(20),
          expiresAt: at(500),
        });
        assert.deepEqual(await store.webhooks.forJob('job_1'), [delivery('msg_1', 'job_1', at(20))]);
        assert.equal(
          await store.jobs.finish('job_1', 'worker_a', { status: 'failed' }, at(30), at(500), delivery('msg_2', 'job_1', at(30))),
          undefined,
        );
        assert.deepEqual(
          (await store.webhooks.forJob('job_1')).map((d) => d.id),
          ['msg_1'],
        );
        assert.equal(await store.jobs.requestCancel('job_1'), undefined, 'a settled job cannot be cancelled');

        await store.jobs.insert(jobRecord('job_2', at(1)));
        assert.equal(
          await store.jobs.finish('job_2', 'worker_a', { status: 'cancelled' }, at(30), at(500), undefined),
          undefined,
          'queued: settled without a worker',
        );
        const error = { code: 'cancelled', type: 'invalid_request_error', message: 'Cancelled.', param: null };
        // The same delivery id again (a retried settle) is kept once.
        const cancelled = await store.jobs.finish(
          'job_2',
          null,
          { status: 'cancelled', error },
          at(30),
          at(500),
          delivery('msg_1', 'job_2', at(30)),
        );
        assert.deepEqual([cancelled?.status, cancelled?.error, cancelled?.result], ['cancelled', error, null]);
        assert.deepEqual(await store.webhooks.forJob('job_2'), []);
        assert.deepEqual(
          (await store.webhooks.forJob('job_1')).map((d) => d.jobId),
          ['job_1'],
        );
      }),
    );

    test(
      'jobs: a cancel request keeps a queued job from being claimed; release gives a running job back without counting the attempt',
      fresh(async () => {
        await store.jobs.insert(jobRecord('job_cancel', at(0)));
        await store.jobs.insert(jobRecord('job_release', at(1)));
        const marked = await store.jobs.requestCancel('job_cancel');
        assert.deepEqual([marked?.status, marked?.cancelRequested], ['queued', true]);
        assert.equal(await store.jobs.requestCancel('job_missing'), undefined);
        const claimed = (await store.jobs.claim(['transcribe'], 'worker_a', at(10), at(40))).claimed;
        assert.equal(claimed?.id, 'job_release');
        assert.equal(await store.jobs.release('job_release', 'worker_b'), false, 'not the owner');
        assert.equal(await store.jobs.release('job_release', 'worker_a'), true);
        const released = await store.jobs.get('job_release');
        assert.deepEqual([released?.status, released?.workerId, released?.leaseExpiresAt, released?.attempts], ['queued', null, null, 0]);
        assert.equal(await store.jobs.release('job_release', 'worker_a'), false, 'no longer running');
        const again = (await other.jobs.claim(['transcribe'], 'worker_b', at(11), at(41))).claimed;
        assert.deepEqual([again?.id, again?.attempts, again?.startedAt], ['job_release', 1, at(10)]);
      }),
    );

    test(
      'jobs: list filters by owner, status and operation, newest first, in cursor pages; expired settled jobs; delete takes deliveries along',
      fresh(async () => {
        const operationsCycle: Operation[] = ['transcribe', 'tts', 'separate'];
        for (let index = 0; index < 9; index++) {
          // Pairs share a creation time: the id orders them.
          await store.jobs.insert(
            jobRecord(`job_${index}`, at(Math.floor(index / 2)), {
              ownerKeyId: index < 7 ? 'key_a' : 'key_b',
              operation: operationsCycle[index % 3]!,
            }),
          );
        }
        assert.deepEqual(
          (await store.jobs.list({ limit: 100 })).map((job) => job.id),
          ['job_8', 'job_7', 'job_6', 'job_5', 'job_4', 'job_3', 'job_2', 'job_1', 'job_0'],
        );
        const pages: string[][] = [];
        let before: { createdAt: string; id: string } | undefined;
        for (;;) {
          const page = await store.jobs.list({ ownerKeyId: 'key_a', limit: 2, ...(before ? { before } : {}) });
          if (page.length === 0) break;
          pages.push(page.map((job) => job.id));
          const last = page.at(-1)!;
          before = { createdAt: last.createdAt, id: last.id };
        }
        assert.deepEqual(pages, [['job_6', 'job_5'], ['job_4', 'job_3'], ['job_2', 'job_1'], ['job_0']]);
        assert.deepEqual(
          (await store.jobs.list({ operation: 'tts', limit: 100 })).map((job) => job.id),
          ['job_7', 'job_4', 'job_1'],
        );
        assert.deepEqual(
          (await store.jobs.list({ ownerKeyId: 'key_b', operation: 'separate', limit: 100 })).map((job) => job.id),
          ['job_8'],
        );

        await store.jobs.finish('job_0', null, { status: 'cancelled' }, at(10), at(100), delivery('msg_0', 'job_0', at(10)));
        await store.jobs.finish('job_1', null, { status: 'cancelled' }, at(10), at(300), undefined);
        assert.deepEqual(
          (await store.jobs.list({ status: 'cancelled', limit: 100 })).map((job) => job.id),
          ['job_1', 'job_0'],
        );
        assert.deepEqual(
          (await store.jobs.list({ status: 'queued', ownerKeyId: 'key_a', limit: 3 })).map((job) => job.id),
          ['job_6', 'job_5', 'job_4'],
        );
        // Queued jobs are never expired, whatever their time.
        assert.deepEqual((await store.jobs.expired(at(100_000))).map((job) => job.id).sort(), ['job_0', 'job_1']);
        assert.deepEqual(
          (await store.jobs.expired(at(100))).map((job) => job.id),
          ['job_0'],
        );
        await store.jobs.delete('job_0');
        assert.equal(await store.jobs.get('job_0'), undefined);
        assert.deepEqual(await store.webhooks.forJob('job_0'), []);
        assert.equal(await store.webhooks.nextDue(), undefined);
      }),
    );

    test(
      'webhooks: claimDue takes due deliveries once (leased until later, then due again); attempts append; nextDue',
      fresh(async () => {
        assert.equal(await store.webhooks.nextDue(), undefined);
        for (let index = 0; index < 6; index++) await settledWithDelivery(`job_${index}`, `msg_${index}`, at(10 + index));
        assert.equal(await store.webhooks.nextDue(), at(10));
        assert.deepEqual(await store.webhooks.claimDue(at(9), at(60), 10), [], 'nothing due yet');

        // Two senders at once, each asking for up to 3 of the 5 due: disjoint, and together all 5.
        const [first, second] = await Promise.all([store.webhooks.claimDue(at(14), at(60), 3), other.webhooks.claimDue(at(14), at(60), 3)]);
        const ids = [...first!, ...second!].map((d) => d.id).sort();
        assert.deepEqual(ids, ['msg_0', 'msg_1', 'msg_2', 'msg_3', 'msg_4']);
        for (const claimed of [...first!, ...second!]) assert.equal(claimed.nextAttemptAt, at(60));
        assert.deepEqual(await store.webhooks.claimDue(at(14), at(60), 10), [], 'leased');
        assert.equal(await store.webhooks.nextDue(), at(15));

        const attempt = (status: number | null, seconds: number) => ({
          at: at(seconds),
          status,
          error: status === null ? 'connect ECONNREFUSED' : null,
          durationMs: 12.5,
        });
        await store.webhooks.recordAttempt('msg_0', attempt(null, 14), 'pending', at(20));
        await other.webhooks.recordAttempt('msg_0', attempt(200, 20), 'delivered', at(20));
        await store.webhooks.recordAttempt('msg_missing', attempt(200, 20), 'delivered', at(20));
        const [recorded] = await store.webhooks.forJob('job_0');
        assert.deepEqual(recorded, {
          ...delivery('msg_0', 'job_0', at(20)),
          status: 'delivered',
          attempts: [attempt(null, 14), attempt(200, 20)],
        });

        await store.webhooks.recordAttempt('msg_1', attempt(503, 15), 'pending', at(30));
        await store.webhooks.recordAttempt('msg_2', attempt(500, 15), 'failed', at(30));
        assert.deepEqual(
          (await store.webhooks.claimDue(at(30), at(90), 10)).map((d) => d.id).sort(),
          ['msg_1', 'msg_5'],
          'a retry is due at its time; failed and delivered ones never',
        );
        assert.deepEqual(
          (await store.webhooks.claimDue(at(60), at(90), 10)).map((d) => d.id).sort(),
          ['msg_3', 'msg_4'],
          'a lease that ran out (the sender died) makes them due again',
        );
        assert.equal(await store.webhooks.nextDue(), at(90));
      }),
    );

    test(
      'blobs: put a file, bytes or a directory; list; read whole, streamed or as a local file; exists; delete a key or a prefix',
      fresh(async () => {
        const source = path.join(work, 'upload.wav');
        writeFileSync(source, Buffer.alloc(6 * 1024 * 1024 + 7, 3));
        assert.equal(await store.blobs.putFile('jobs/job_1/audio-0.wav', source), 6 * 1024 * 1024 + 7);
        assert.equal(existsSync(source), false, 'the source is moved into the store');
        assert.equal(await store.blobs.putBytes('jobs/job_1/result.json', Buffer.from('{"ok":true}')), 11);
        const dir = path.join(work, 'voice');
        mkdirSync(path.join(dir, 'clips'), { recursive: true });
        writeFileSync(path.join(dir, 'profile.json'), '{}');
        writeFileSync(path.join(dir, 'clips', 'reference-1.flac'), 'flac');
        await store.blobs.putDirectory('voices/voice_1', dir);
        assert.equal(existsSync(dir), false, 'the directory is moved into the store');

        assert.deepEqual((await other.blobs.list('jobs/job_1')).sort(), ['audio-0.wav', 'result.json']);
        assert.deepEqual((await other.blobs.list('voices')).sort(), ['voice_1']);
        assert.deepEqual((await other.blobs.list('voices/voice_1')).sort(), ['clips', 'profile.json']);
        assert.deepEqual(await other.blobs.list('voices/voice_9'), []);

        assert.equal((await other.blobs.readBytes('jobs/job_1/result.json')).toString(), '{"ok":true}');
        assert.equal(await text(await other.blobs.readStream('voices/voice_1/clips/reference-1.flac')), 'flac');
        await assert.rejects(other.blobs.readStream('jobs/job_1/missing.wav'), /jobs\/job_1\/missing\.wav/);
        await assert.rejects(other.blobs.readBytes('jobs/job_1/missing.wav'), /jobs\/job_1\/missing\.wav/);
        const local = await other.blobs.localFile('jobs/job_1/audio-0.wav', scratch);
        assert.ok(readFileSync(local.path).equals(Buffer.alloc(6 * 1024 * 1024 + 7, 3)));
        await local.release();
        assert.equal(await other.blobs.exists('jobs/job_1/audio-0.wav'), true, 'release leaves the blob');
        assert.equal(await other.blobs.exists('jobs/job_1/missing.wav'), false);

        await store.blobs.delete('jobs/job_1/result.json');
        assert.equal(await other.blobs.exists('jobs/job_1/result.json'), false);
        assert.deepEqual(await other.blobs.list('jobs/job_1'), ['audio-0.wav']);
        await store.blobs.delete('voices/voice_1');
        assert.equal(await other.blobs.exists('voices/voice_1/clips/reference-1.flac'), false);
        assert.deepEqual(await other.blobs.list('voices'), [], 'a deleted prefix is not listed');
        assert.deepEqual(await other.blobs.list('voices/voice_1'), [], 'nor is anything under it');
        await store.blobs.delete('jobs/job_1');
        assert.deepEqual(await other.blobs.list('jobs/job_1'), []);
        await store.blobs.delete('voices/voice_missing');
        await assert.rejects(async () => store.blobs.readBytes('../escape'), /invalid blob key/);
      }),
    );
  });
}

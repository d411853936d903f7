/**
 * Store bench: job-claim latency of the record store on SQLite and on PostgreSQL, this tree's store beside a baseline
 * commit's (default: the last one with a hand-written store per backend), in one run. Per backend, store and round, on a
 * new database: 200 queued jobs claimed one at a time by one worker (claim latency), 200 polls of the empty queue (idle
 * poll latency), then 200 more jobs claimed by two handles at once (as two processes; jobs per second). Rounds alternate
 * the two stores so both see the same machine. Writes bench/results/store.json.
 *
 *   npm run bench -- store            (BENCH_STORE_BASELINE=<commit> to compare with another commit)
 */
import { execFileSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import type { Config } from '../src/config.js';
import { openStore } from '../src/storage/open.js';
import type { Store } from '../src/storage/store.js';
import type { JobRecord } from '../src/core/records.js';
import { packageRoot } from '../src/core/version.js';
import { makeTempDir } from '../test/helpers/app.js';
import { startPostgres } from '../test/helpers/postgres.js';

type OpenStore = (config: Pick<Config, 'dataDir' | 'databaseUrl' | 'blobs'>) => Promise<Store>;

const baseline = process.env.BENCH_STORE_BASELINE ?? '8f7b7ea';
const jobsPerRound = 200;
const idlePolls = 200;
const rounds = 10;

/** The baseline's src/ in a temp dir beside this tree's node_modules, and its openStore. */
async function baselineStore(): Promise<OpenStore> {
  const dir = makeTempDir('store-baseline');
  execFileSync('sh', ['-c', 'git archive "$0" src | tar -x -C "$1"', baseline, dir], { cwd: packageRoot });
  symlinkSync(path.join(packageRoot, 'node_modules'), path.join(dir, 'node_modules'));
  return ((await import(pathToFileURL(path.join(dir, 'src/storage/open.ts')).href)) as { openStore: OpenStore }).openStore;
}

function job(index: number): JobRecord {
  const createdAt = new Date(Date.UTC(2030, 0, 1) + index).toISOString();
  return {
    id: `job_${String(index).padStart(6, '0')}`,
    ownerKeyId: 'key_bench',
    operation: index % 2 === 0 ? 'transcribe' : 'tts',
    route: 'native',
    status: 'queued',
    params: { language: 'en', text: 'The job finished and the webhook was sent.' },
    inputs: [{ field: 'audio', blobKey: `jobs/${index}/audio-0`, filename: 'talk.wav', bytes: 123_456 }],
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
    expiresAt: '2030-02-01T00:00:00.000Z',
  };
}

const lease = () => {
  const now = Date.now();
  return [new Date(now).toISOString(), new Date(now + 30_000).toISOString()] as const;
};

interface Samples {
  claimMs: number[];
  idlePollMs: number[];
  twoClaimersJobsPerSecond: number[];
}

async function round(open: OpenStore, config: Pick<Config, 'dataDir' | 'databaseUrl' | 'blobs'>, samples: Samples): Promise<void> {
  const [store, other] = [await open(config), await open(config)] as [Store, Store];
  try {
    for (let index = 0; index < jobsPerRound; index++) await store.jobs.insert(job(index));
    for (;;) {
      const [now, until] = lease();
      const started = performance.now();
      const { claimed } = await store.jobs.claim(['transcribe', 'tts'], 'worker_a', now, until);
      if (!claimed) break;
      samples.claimMs.push(performance.now() - started);
    }
    for (let poll = 0; poll < idlePolls; poll++) {
      const [now, until] = lease();
      const started = performance.now();
      await store.jobs.claim(['transcribe', 'tts'], 'worker_a', now, until);
      samples.idlePollMs.push(performance.now() - started);
    }
    for (let index = jobsPerRound; index < 2 * jobsPerRound; index++) await store.jobs.insert(job(index));
    const claimer = async (handle: Store, workerId: string) => {
      for (;;) {
        const [now, until] = lease();
        if (!(await handle.jobs.claim(['transcribe', 'tts'], workerId, now, until)).claimed) return;
      }
    };
    const started = performance.now();
    await Promise.all([claimer(store, 'worker_a'), claimer(other, 'worker_b')]);
    samples.twoClaimersJobsPerSecond.push(jobsPerRound / ((performance.now() - started) / 1000));
  } finally {
    await Promise.all([store.close(), other.close()]);
  }
}

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const ms = (value: number): number => Math.round(value * 1000) / 1000;
const summary = (samples: Samples) => ({
  claim_ms: { p50: ms(percentile(samples.claimMs, 50)), p95: ms(percentile(samples.claimMs, 95)) },
  idle_poll_ms: { p50: ms(percentile(samples.idlePollMs, 50)), p95: ms(percentile(samples.idlePollMs, 95)) },
  two_claimers_jobs_per_second: Math.round(percentile(samples.twoClaimersJobsPerSecond, 50)),
});

const stores: Record<'before' | 'after', OpenStore> = { before: await baselineStore(), after: openStore };
const postgres = await startPostgres();
const results: Record<string, Record<string, ReturnType<typeof summary>>> = {};
try {
  const backends = {
    sqlite: async () => ({ databaseUrl: null }),
    postgres: async () => {
      const name = `bench_${Math.random().toString(36).slice(2)}`;
      const admin = new pg.Client({ connectionString: postgres.url });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      const url = new URL(postgres.url);
      url.pathname = `/${name}`;
      return { databaseUrl: url.toString() };
    },
  };
  for (const [backend, database] of Object.entries(backends)) {
    const empty = (): Samples => ({ claimMs: [], idlePollMs: [], twoClaimersJobsPerSecond: [] });
    const samples = { before: empty(), after: empty() };
    for (let index = 0; index < rounds; index++) {
      for (const which of ['before', 'after'] as const) {
        const dataDir = makeTempDir('store-bench');
        const config = { dataDir, blobs: { kind: 'disk' as const, dir: path.join(dataDir, 'blobs') }, ...(await database()) };
        await round(stores[which], config, samples[which]);
      }
    }
    results[backend] = { before: summary(samples.before), after: summary(samples.after) };
    process.stdout.write(`${backend}: ${JSON.stringify(results[backend])}\n`);
  }
} finally {
  await postgres.stop();
}

const output = {
  bench: 'store',
  date: new Date().toISOString(),
  baseline,
  method:
    `${rounds} rounds per backend, the two stores alternating, each on a new database: ${jobsPerRound} queued jobs claimed one at a ` +
    `time, ${idlePolls} polls of the empty queue, ${jobsPerRound} more claimed by two handles at once (their rate: median of the rounds)`,
  results,
};
writeFileSync(path.join(packageRoot, 'bench/results/store.json'), `${JSON.stringify(output, null, 2)}\n`);

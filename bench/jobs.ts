/**
 * Jobs bench: one API-only node and 1 or 2 worker processes (one inference thread each) on each store backend.
 * Measures throughput of 40 short jobs (scaling from 1 to 2 workers), submit-to-start and job-end-to-webhook latency on
 * an idle system (20 jobs one after another), the API node's peak RSS, and the CPU seconds each role (API, workers,
 * Postgres, SeaweedFS, this client) spent during the throughput run. Writes bench/results/jobs.json (jobs-api-node-options.json with BENCH_API_NODE_OPTIONS).
 *
 *   npm run bench -- jobs            (BENCH_JOBS_BACKENDS=embedded,postgres to choose; BENCH_API_NODE_OPTIONS: see below)
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, startServerProcess, startWorkerProcess, type ServerProcess } from './lib/server-process.js';
import { packageRoot } from '../src/core/version.js';
import { makeTempDir, sharedModelsDir } from '../test/helpers/app.js';
import { Api, sleep, startReceiver, type Job } from '../test/helpers/jobs.js';
import { startNetworkStore } from '../test/helpers/network-store.js';

interface Backend {
  name: string;
  env: Record<string, string>;
  stop(): Promise<void>;
}

const key = `vx_${'j'.repeat(43)}`;
const text = 'The job finished and the webhook was sent.';
const throughputJobs = 40;
const latencyJobs = 20;

async function embedded(): Promise<Backend> {
  return { name: 'embedded (SQLite + local disk)', env: {}, stop: async () => undefined };
}

async function postgres(): Promise<Backend> {
  return { name: 'Postgres + S3 (SeaweedFS)', ...(await startNetworkStore()) };
}

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const round = (value: number, digits = 1): number => Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * CPU seconds used so far by the processes of the deployment, by role: where the second worker's core goes when two
 * workers share two cores with the API node, the stores and this client. Processes that exited are not counted.
 */
function cpuSecondsByRole(api: number, workers: number[]): Record<string, number> {
  const ticksPerSecond = 100;
  const totals: Record<string, number> = { api: 0, workers: 0, postgres: 0, seaweedfs: 0, bench_client: 0 };
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const pid = Number(entry);
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const seconds = (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
    const role =
      pid === api
        ? 'api'
        : workers.includes(pid)
          ? 'workers'
          : comm.startsWith('postgres')
            ? 'postgres'
            : comm === 'weed'
              ? 'seaweedfs'
              : pid === process.pid
                ? 'bench_client'
                : undefined;
    if (role) totals[role]! += seconds;
  }
  return totals;
}

/** Peak resident set of a process (VmHWM), MB. */
function peakRssMegabytes(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? round(Number(match[1]) / 1024) : Number.NaN;
}

async function deployment(backend: Backend, workers: number) {
  const dataDir = makeTempDir('bench-jobs');
  const env = {
    ...backend.env,
    VOXD_API_KEYS: key,
    VOXD_LOCAL_MODEL_DIRS: sharedModelsDir,
    VOXD_WEBHOOK_ALLOW_PRIVATE: 'true',
    VOXD_RATE_LIMIT_PER_MINUTE: '1000000',
    VOXD_MAX_CONCURRENT_PER_KEY: '1000',
    VOXD_THREADS: '1',
    VOXD_WORKER_OPERATIONS: 'tts',
  };
  // BENCH_API_NODE_OPTIONS: V8 flags for the API node alone (e.g. --max-semi-space-size=2 to measure a leaner young generation).
  const apiNodeOptions: Record<string, string> = process.env.BENCH_API_NODE_OPTIONS
    ? { NODE_OPTIONS: process.env.BENCH_API_NODE_OPTIONS }
    : {};
  const api: ServerProcess = await startServerProcess(dataDir, { ...env, ...apiNodeOptions, VOXD_ROLE: 'api', VOXD_LOG_LEVEL: 'warn' });
  // With a network store each node has its own data dir (scratch only); embedded nodes share one.
  const workerDir = (i: number): string => (backend.env.VOXD_DATABASE_URL ? makeTempDir(`bench-worker-${i}`) : dataDir);
  const nodes = [];
  for (let i = 0; i < workers; i++) nodes.push(await startWorkerProcess(workerDir(i), { ...env, VOXD_LOG_LEVEL: 'warn' }));
  for (let i = 0; i < 3000 && !nodes.every((node) => node.output().includes('engine catalog published')); i++) await sleep(100);
  const client = new Api(api.base, key);
  const receiver = await startReceiver(await freePort());
  const receivedAt = new Map<string, number>();
  const received = receiver.received;
  const watch = setInterval(() => {
    for (const hit of received) {
      const id = (JSON.parse(hit.body) as { data: Job }).data.id;
      if (!receivedAt.has(id)) receivedAt.set(id, Date.now());
    }
  }, 5);
  const submit = async (): Promise<string> => {
    const response = await client.postJson('/v1/audio/tts', { text, voice_id: 'af_heart', format: 'wav', webhook_url: receiver.url });
    if (response.status !== 202) throw new Error(`submit: ${response.status} ${await response.text()}`);
    return ((await response.json()) as Job).id;
  };
  try {
    // Warm-up: first synthesis of each worker.
    await Promise.all(Array.from({ length: workers * 2 }, async () => client.waitFor(await submit())));

    const submitToStartMs: number[] = [];
    const endToWebhookMs: number[] = [];
    for (let i = 0; i < latencyJobs; i++) {
      const id = await submit();
      const job = (await client.waitFor(id)) as Job & { created_at: string; finished_at: string };
      for (let j = 0; j < 200 && !receivedAt.has(id); j++) await sleep(10);
      submitToStartMs.push(Date.parse(job.started_at!) - Date.parse(job.created_at));
      endToWebhookMs.push(receivedAt.get(id)! - Date.parse(job.finished_at));
    }

    const pids = { api: api.child.pid!, workers: nodes.map((node) => node.child.pid!) };
    const cpuBefore = cpuSecondsByRole(pids.api, pids.workers);
    const ids = [];
    for (let i = 0; i < throughputJobs; i++) ids.push(await submit());
    // Their ends are seen through the webhooks, not by polling each job: 40 pollers (200 requests a second through the API
    // node) were a load of their own on the workers' two cores.
    for (const deadline = Date.now() + 600_000; !ids.every((id) => receivedAt.has(id)); await sleep(50)) {
      if (Date.now() > deadline) throw new Error(`throughput jobs not all done: ${ids.filter((id) => !receivedAt.has(id)).length} left`);
    }
    const settled = (await Promise.all(ids.map((id) => client.job(id)))) as Array<Job & { created_at: string; finished_at: string }>;
    const cpuAfter = cpuSecondsByRole(pids.api, pids.workers);
    const failed = settled.filter((job) => job.status !== 'succeeded').length;
    const seconds =
      (Math.max(...settled.map((j) => Date.parse(j.finished_at))) - Math.min(...settled.map((j) => Date.parse(j.created_at)))) / 1000;
    return {
      workers,
      jobs_per_second: round(throughputJobs / seconds, 3),
      throughput_seconds: round(seconds, 2),
      failed,
      submit_to_start_ms: { p50: percentile(submitToStartMs, 50), p95: percentile(submitToStartMs, 95) },
      job_end_to_webhook_ms: { p50: percentile(endToWebhookMs, 50), p95: percentile(endToWebhookMs, 95) },
      api_peak_rss_mb: peakRssMegabytes(api.child.pid!),
      throughput_cpu_seconds: Object.fromEntries(
        Object.entries(cpuAfter).map(([role, seconds]) => [role, round(seconds - cpuBefore[role]!, 2)]),
      ),
    };
  } catch (error) {
    for (const node of nodes) process.stderr.write(`worker output:\n${node.output().slice(-3000)}\n`);
    throw error;
  } finally {
    clearInterval(watch);
    await receiver.close();
    for (const node of [api, ...nodes]) node.child.kill('SIGKILL');
    await Promise.all([api, ...nodes].map((node) => node.exited));
  }
}

const factories: Record<string, () => Promise<Backend>> = { embedded, postgres };
const chosen = (process.env.BENCH_JOBS_BACKENDS ?? 'embedded,postgres').split(',').map((name) => name.trim());
const results: Record<string, unknown> = {};
for (const name of chosen) {
  const make = factories[name];
  if (!make) throw new Error(`unknown backend '${name}': ${Object.keys(factories).join(', ')}`);
  const backend = await make();
  try {
    const one = await deployment(backend, 1);
    const two = await deployment(backend, 2);
    results[name] = {
      backend: backend.name,
      one_worker: one,
      two_workers: two,
      scaling_ratio: round(two.jobs_per_second / one.jobs_per_second, 2),
    };
    process.stdout.write(`${JSON.stringify(results[name], null, 2)}\n`);
  } finally {
    await backend.stop();
  }
}
const output = {
  bench: 'jobs',
  api_node_options: process.env.BENCH_API_NODE_OPTIONS ?? null,
  date: new Date().toISOString(),
  job: `tts, ${text.length} characters, af_heart, wav; one inference thread per worker`,
  targets: {
    api_peak_rss_mb: '< 150',
    submit_to_start_p95_ms: '< 200 (idle)',
    job_end_to_webhook_p95_ms: '< 500',
    scaling_ratio: '>= 1.7',
  },
  results,
};
// A run with API node options is kept beside the default one.
const resultName = process.env.BENCH_API_NODE_OPTIONS ? 'jobs-api-node-options.json' : 'jobs.json';
writeFileSync(path.join(packageRoot, 'bench/results', resultName), `${JSON.stringify(output, null, 2)}\n`);

/**
 * Soak: ten minutes (BENCH_SOAK_SECONDS) of mixed load from four clients (BENCH_SOAK_CLIENTS) on the real server
 * process, the same driver as the CI soak test: transcription, speech, separation, voice creation and deletion, with a
 * health probe every second. Samples the server's RSS and its main thread's JS heap (heap used and external memory, from
 * /metrics) every 5 s: RSS rising while the heap stays flat is native memory (model runtimes, malloc arenas). Writes
 * bench/results/soak.json with the series and the mean of each third (the target: last third within 10% of the middle).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { packageRoot } from '../src/core/version.js';
import { fixedKey, startServerProcess, waitUntilReady } from './lib/server-process.js';
import { runSoak, thirdsOf } from './lib/soak.js';

const sharedDir = path.resolve(process.env.VOXD_SHARED_DIR ?? path.join(packageRoot, '..', 'shared'));
const durationSeconds = Number(process.env.BENCH_SOAK_SECONDS ?? 600);
const clients = Number(process.env.BENCH_SOAK_CLIENTS ?? 4);
const keys = Array.from({ length: clients }, (_, i) => fixedKey(`soak${i}`));
// Its own key, so sampling /metrics takes nothing from the clients' rate and concurrency limits.
const metricsKey = fixedKey('metrics');
const sampleMilliseconds = 5000;

const dataDir = mkdtempSync(path.join(tmpdir(), 'voxd-soak-'));
const server = await startServerProcess(dataDir, {
  VOXD_API_KEYS: [...keys, metricsKey].join(','),
  VOXD_LOCAL_MODEL_DIRS: path.join(sharedDir, 'models'),
  VOXD_LOG_LEVEL: 'warn',
});
const series = { atSeconds: [] as number[], rss: [] as number[], heapUsed: [] as number[], external: [] as number[] };
// The machine's 1-minute load at each sample: other processes on the cores slow requests and probes too.
const loadAverages: number[] = [];
const bytesToMb = (bytes: number): number => Math.round(bytes / 2 ** 20);
const hundredths = (value: number): number => Math.round(value * 100) / 100;
let missedSamples = 0;
const sample = async (startedAt: number): Promise<void> => {
  try {
    const rssKb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))?.[1]);
    const metrics = await (
      await fetch(`${server.base}/metrics`, {
        headers: { authorization: `Bearer ${metricsKey}` },
        signal: AbortSignal.timeout(sampleMilliseconds),
      })
    ).text();
    const gauge = (name: string): number => Number(new RegExp(`^voxd_${name} (\\S+)$`, 'm').exec(metrics)?.[1]);
    const values = [rssKb * 1024, gauge('nodejs_heap_size_used_bytes'), gauge('nodejs_external_memory_bytes')].map(bytesToMb);
    if (values.some(Number.isNaN)) throw new Error('a memory figure is missing');
    // The series stay aligned: a sample is kept whole or not at all.
    series.atSeconds.push(Math.round((Date.now() - startedAt) / 1000));
    [series.rss, series.heapUsed, series.external].forEach((list, i) => {
      list.push(values[i]!);
    });
    loadAverages.push(loadavg()[0]!);
  } catch (error) {
    missedSamples++;
    process.stderr.write(`memory sample missed: ${(error as Error).message}\n`);
  }
};
/** What the server process was started with (glibc reads it at start), as /proc reports it. */
const startedWith = (name: string): string | null =>
  readFileSync(`/proc/${server.child.pid}/environ`, 'utf8')
    .split('\0')
    .find((entry) => entry.startsWith(`${name}=`))
    ?.slice(name.length + 1) ?? null;
const summary = (values: number[]) => {
  const tenth = Math.max(1, Math.floor(values.length / 10));
  const mean = (part: number[]): number => Math.round(part.reduce((a, b) => a + b, 0) / part.length);
  const thirds = thirdsOf(values);
  return {
    ready: values[0],
    peak: Math.max(...values),
    first_tenth_mean: mean(values.slice(0, tenth)),
    last_tenth_mean: mean(values.slice(-tenth)),
    first_third_mean: Math.round(thirds.first),
    middle_third_mean: Math.round(thirds.middle),
    last_third_mean: Math.round(thirds.last),
    last_to_middle_third: Math.round(thirds.lastToMiddle * 1000) / 1000,
  };
};
try {
  await waitUntilReady(server.base);
  const mallocArenaMax = startedWith('MALLOC_ARENA_MAX');
  let soakDone = false;
  const sampling = (async () => {
    const startedAt = Date.now();
    for (let next = startedAt; !soakDone; next += sampleMilliseconds) {
      await sample(startedAt);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next + sampleMilliseconds - Date.now())));
    }
  })();
  const result = await runSoak({ base: server.base, keys, durationSeconds, evalDir: path.join(sharedDir, 'eval') }).finally(
    () => (soakDone = true),
  );
  await sampling;
  const output = {
    date: new Date().toISOString(),
    load_average_1min_at_end: hundredths(loadavg()[0]!),
    load_average_1min: {
      mean: hundredths(loadAverages.reduce((a, b) => a + b, 0) / loadAverages.length),
      max: hundredths(Math.max(...loadAverages)),
    },
    malloc_arena_max: mallocArenaMax,
    ...result,
    server_rss_mb: summary(series.rss),
    // The main thread's V8 heap and the memory its ArrayBuffers and Buffers hold (worker threads' heaps are not in them).
    js_heap_used_mb: summary(series.heapUsed),
    js_external_mb: summary(series.external),
    series: {
      interval_seconds: sampleMilliseconds / 1000,
      missed_samples: missedSamples,
      at_seconds: series.atSeconds,
      rss_mb: series.rss,
      js_heap_used_mb: series.heapUsed,
      js_external_mb: series.external,
    },
  };
  // A series on one line each, not one number per line.
  const json = JSON.stringify(output, null, 2).replace(
    /\[\s*([-\d.,\s]+?)\s*\]/g,
    (_, numbers: string) => `[${numbers.split(/,\s*/).join(', ')}]`,
  );
  writeFileSync(path.join(packageRoot, 'bench/results/soak.json'), `${json}\n`);
  process.stdout.write(`${json}\n`);
  const healthy = result.unfinished === 0 && result.unexpected === 0 && result.probes.over2s === 0 && result.probes.failed === 0;
  process.exitCode = healthy ? 0 : 1;
} finally {
  server.child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
}

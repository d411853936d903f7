/**
 * Soak: ten minutes (BENCH_SOAK_SECONDS) of mixed load from four clients (BENCH_SOAK_CLIENTS) on the real server
 * process, the same driver as the CI soak test: transcription, speech, separation, voice creation and deletion, with a
 * health probe every second. Samples the server's RSS every 5 s. Writes bench/results/soak.json.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { packageRoot } from '../src/version.js';
import { fixedKey, startServerProcess, waitUntilReady } from './lib/server-process.js';
import { runSoak } from './lib/soak.js';

const sharedDir = path.resolve(process.env.VOXD_SHARED_DIR ?? path.join(packageRoot, '..', 'shared'));
const durationSeconds = Number(process.env.BENCH_SOAK_SECONDS ?? 600);
const clients = Number(process.env.BENCH_SOAK_CLIENTS ?? 4);
const keys = Array.from({ length: clients }, (_, i) => fixedKey(`soak${i}`));

const dataDir = mkdtempSync(path.join(tmpdir(), 'voxd-soak-'));
const server = await startServerProcess(dataDir, { VOXD_API_KEYS: keys.join(','), VOXD_LOCAL_MODEL_DIRS: path.join(sharedDir, 'models'), VOXD_LOG_LEVEL: 'warn' });
const rssMb = (): number => {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : 0;
};
try {
  await waitUntilReady(server.base);
  const rssSamples: number[] = [rssMb()];
  const sampler = setInterval(() => rssSamples.push(rssMb()), 5000);
  const result = await runSoak({ base: server.base, keys, durationSeconds, evalDir: path.join(sharedDir, 'eval') });
  clearInterval(sampler);
  const tenth = Math.max(1, Math.floor(rssSamples.length / 10));
  const mean = (values: number[]): number => Math.round(values.reduce((a, b) => a + b, 0) / values.length);
  const output = {
    date: new Date().toISOString(),
    load_average_1min_at_end: Math.round(loadavg()[0]! * 100) / 100,
    ...result,
    server_rss_mb: { ready: rssSamples[0], peak: Math.max(...rssSamples), first_tenth_mean: mean(rssSamples.slice(0, tenth)), last_tenth_mean: mean(rssSamples.slice(-tenth)) },
  };
  writeFileSync(path.join(packageRoot, 'bench/results/soak.json'), `${JSON.stringify(output, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
  const healthy = result.unfinished === 0 && result.unexpected === 0 && result.probes.over2s === 0 && result.probes.failed === 0;
  process.exitCode = healthy ? 0 : 1;
} finally {
  server.child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
}

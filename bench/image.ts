/**
 * The container images of `scripts/image.sh build` (issue 41; targets: the image without models <= 1.5 GB, first start
 * of voxd-full ready in <= 60 s): each image's size, and the seconds from `run` to a 200 from /v1/ready for voxd-full
 * in a new container with new volumes (BENCH_ROUNDS runs, default 2: median and all). The last build's and the last
 * cold build's wall time (scripts/image.sh build records both: a cold one is what CI pays) are copied in. Run by
 * `scripts/image.sh bench`, which sets VOXD_ENGINE. Results: bench/results/image.json.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, loadavg } from 'node:os';
import path from 'node:path';
import { packageRoot } from '../src/core/version.js';
import { freePort } from './lib/server-process.js';

const [engineCommand, ...engineFlags] = (process.env.VOXD_ENGINE ?? 'podman').split(' ');
const engine = (...args: string[]): string =>
  execFileSync(engineCommand as string, [...engineFlags, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).trim();
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const megabytes = (image: string): number => Math.round(Number(engine('image', 'inspect', '--format', '{{.Size}}', image)) / 1e6);

const sizes = {
  voxd_mb: megabytes('localhost/voxd:latest'),
  voxd_full_mb: megabytes('localhost/voxd-full:latest'),
  voxd_stores_mb: megabytes('localhost/voxd-stores:latest'),
};

async function startSeconds(): Promise<number> {
  const name = `voxd-image-bench-${process.pid}`;
  const port = await freePort();
  const startedAt = performance.now();
  engine('run', '--detach', '--name', name, '--publish', `127.0.0.1:${port}:8080`, 'localhost/voxd-full:latest');
  try {
    for (const deadline = Date.now() + 600_000; Date.now() < deadline; await sleep(250)) {
      const status = await fetch(`http://127.0.0.1:${port}/v1/ready`).then(
        (response) => response.status,
        () => 0,
      );
      if (status === 200) return Math.round((performance.now() - startedAt) / 100) / 10;
    }
    throw new Error('voxd-full not ready in 600 s');
  } finally {
    engine('rm', '--force', '--volumes', name);
  }
}

const starts: number[] = [];
for (let i = 0; i < rounds; i++) starts.push(await startSeconds());
const buildRecord = (name: string): unknown => {
  const file = path.join(process.env.VOXD_CACHE_DIR ?? path.join(homedir(), '.cache', 'voxd'), 'image', name);
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : null;
};
const results = {
  bench: 'image',
  date: new Date().toISOString(),
  engine: [engineCommand, ...engineFlags].join(' '),
  load_average_1m_at_end: Math.round(loadavg()[0]! * 10) / 10,
  targets: { voxd_mb_max: 1500, voxd_full_first_start_seconds_max: 60 },
  sizes,
  voxd_full_first_start_seconds: { median: median(starts), runs: starts },
  last_build: buildRecord('last-build.json'),
  last_cold_build: buildRecord('last-cold-build.json'),
};
writeFileSync(path.join(packageRoot, 'bench/results/image.json'), `${JSON.stringify(results, null, 2)}\n`);
console.log(JSON.stringify(results, null, 2));

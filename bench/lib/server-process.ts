/** Starts the real server process (the built `npm start` entry point) on a free loopback port, for tests and benches. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { packageRoot } from '../../src/core/version.js';

export interface ServerProcess {
  child: ChildProcess;
  base: string;
  dataDir: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal name) once the process has exited. */
  exited: Promise<number | string>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * The variables `npm start` sets unless the environment has them (`NAME=${NAME:-value}` in package.json's start script), so
 * the process tested and measured runs as the one deployed: MALLOC_ARENA_MAX, read by glibc at process start (without it,
 * model threads keep freed memory in malloc arenas of their own).
 */
export function npmStartEnv(): Record<string, string> {
  const { scripts } = JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { scripts: { start: string } };
  return Object.fromEntries(
    [...scripts.start.matchAll(/(\w+)=\$\{\1:-([^}]*)\}/g)].map(([, name, value]) => [name!, process.env[name!] ?? value!]),
  );
}

/** A key in the accepted format, the same for every call with the same seed. */
export const fixedKey = (seed: string): string => `vx_${seed.repeat(43).slice(0, 43)}`;

/**
 * Starts the server with `env` on top of this process's environment and waits until /v1/health answers. `source`: a
 * checkout whose src/main.ts runs under tsx instead of the build (a bench comparing two versions side by side).
 */
export async function startServerProcess(dataDir: string, env: Record<string, string>, source?: string): Promise<ServerProcess> {
  const entry = source ? path.join(source, 'src/main.ts') : path.join(packageRoot, 'dist/src/main.js');
  if (!existsSync(entry)) throw new Error(source ? `${entry} does not exist` : 'run `npm run build` first (npm test does)');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [...(source ? ['--import', 'tsx'] : []), entry], {
    ...(source ? { cwd: source } : {}),
    env: { ...process.env, ...npmStartEnv(), VOXD_PORT: String(port), VOXD_DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  for (let attempt = 0; attempt < 200 && child.exitCode === null; attempt++) {
    try {
      if ((await fetch(`${base}/v1/health`)).ok) return { child, base, dataDir, output: () => output, exited };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start:\n${output}`);
}

/**
 * Starts a job worker process (`voxd serve --role worker`, no HTTP) on `env` and waits until it has started (its
 * models load in the background; jobs wait for them).
 */
export async function startWorkerProcess(dataDir: string, env: Record<string, string>): Promise<Omit<ServerProcess, 'base'>> {
  const entry = path.join(packageRoot, 'dist/src/cli/main.js');
  if (!existsSync(entry)) throw new Error('run `npm run build` first (npm test does)');
  const child = spawn(process.execPath, [entry, 'serve', '--role', 'worker'], {
    env: { ...process.env, ...npmStartEnv(), VOXD_DATA_DIR: dataDir, ...env, VOXD_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  for (let attempt = 0; attempt < 600 && child.exitCode === null; attempt++) {
    if (output.includes('"msg":"voxd started"')) return { child, dataDir, output: () => output, exited };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`worker did not start:\n${output}`);
}

/** Waits until /v1/ready says every model is loaded (preloading converts models on a cold cache: allow minutes). */
export async function waitUntilReady(base: string, timeoutMs = 300_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 500))) {
    if (((await (await fetch(`${base}/v1/ready`)).json()) as { ready: boolean }).ready) return;
  }
  throw new Error('models did not load in time');
}

/**
 * A throwaway PostgreSQL cluster from Debian's server binaries (scripts/setup.sh installs `postgresql`): initdb in a temp
 * dir, trust authentication, listening on a free loopback port only, durability off (fsync) for speed. initdb refuses
 * to run as root, so under root (CI) the cluster belongs to `nobody`.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../bench/lib/server-process.js';
import { makeTempDir } from './app.js';
import { startDaemon, waitFor } from './daemon.js';

function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((version) => existsSync(path.join(root, version, 'bin', 'initdb'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest === undefined) throw new Error(`no PostgreSQL server under ${root}: run scripts/setup.sh (it installs Debian's postgresql)`);
  return path.join(root, newest, 'bin');
}

/** Runs a command as `nobody` when this process is root, else as this user. */
function unprivileged(command: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [command, args];
  return ['setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--inh-caps=-all', command, ...args]];
}

export async function startPostgres(): Promise<{ url: string; stop(): Promise<void> }> {
  const bin = postgresBin();
  const dir = makeTempDir('postgres');
  if (process.getuid?.() === 0) {
    const id = (flag: string, name: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
    chownSync(dir, id('-u', 'nobody'), id('-g', 'nobody'));
  }
  const dataDir = path.join(dir, 'data');
  const [initdb, initdbArgs] = unprivileged(path.join(bin, 'initdb'), [
    '-D',
    dataDir,
    '-U',
    'postgres',
    '--auth=trust',
    '--no-locale',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  execFileSync(initdb, initdbArgs, { cwd: dir, stdio: 'pipe' });
  const port = await freePort();
  const [postgres, postgresArgs] = unprivileged(path.join(bin, 'postgres'), [
    '-D',
    dataDir,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `unix_socket_directories=${dir}`,
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
  ]);
  // SIGINT is PostgreSQL's fast shutdown: clients are disconnected, nothing is waited for.
  const daemon = startDaemon(dir, postgres, postgresArgs, { stopSignal: 'SIGINT', graceMs: 5000 });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  try {
    await waitFor('PostgreSQL', daemon, 30_000, async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.end();
    });
  } catch (error) {
    await daemon.stop();
    throw error;
  }
  return { url, stop: daemon.stop };
}

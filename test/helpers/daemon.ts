/** A server process a test starts itself (PostgreSQL, SeaweedFS) in a temp dir that goes with it, also when a test fails. */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

export interface Daemon {
  child: ChildProcess;
  /** The last lines the process wrote, for error messages. */
  logTail(): string;
  /** Stops the process (signal, then SIGKILL after `graceMs`) and removes its directory. */
  stop(): Promise<void>;
}

/** Runs `command` with its output in `dir`/server.log; `cleanup` runs after the process is gone (extra files it leaves). */
export function startDaemon(
  dir: string,
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; stopSignal: NodeJS.Signals; graceMs: number; cleanup?: () => void },
): Daemon {
  const logFile = path.join(dir, 'server.log');
  const log = openSync(logFile, 'a');
  const child = spawn(command, args, { cwd: dir, env: options.env ?? process.env, stdio: ['ignore', log, log] });
  // Not keeping the test process alive: when it ends, the exit hook below stops the server.
  child.unref();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const remove = () => {
    rmSync(dir, { recursive: true, force: true });
    options.cleanup?.();
  };
  // A test process that ends without calling stop() (an uncaught failure) still leaves nothing running or on disk.
  const onExit = () => {
    child.kill('SIGKILL');
    remove();
  };
  process.once('exit', onExit);
  return {
    child,
    logTail: () => {
      try {
        return readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n');
      } catch {
        return '';
      }
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        // Held again until it has exited: otherwise this process could end first, waiting on nothing else.
        child.ref();
        child.kill(options.stopSignal);
        const timer = setTimeout(() => child.kill('SIGKILL'), options.graceMs);
        await exited;
        clearTimeout(timer);
      }
      process.removeListener('exit', onExit);
      remove();
    },
  };
}

export async function waitFor<T>(what: string, daemon: Daemon, timeoutMs: number, probe: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (daemon.child.exitCode !== null || daemon.child.signalCode !== null) throw new Error(`${what} exited:\n${daemon.logTail()}`);
    try {
      return await probe();
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`${what} did not answer within ${timeoutMs} ms (${(error as Error).message}):\n${daemon.logTail()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

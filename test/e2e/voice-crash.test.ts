/** kill -9 of the real server process while it creates a voice, then a restart on the same data directory. */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { evalDir, makeTempDir, multipartBody } from '../helpers/app.js';
import { startServer as startServerProcess, testKey } from '../helpers/server.js';

const key = testKey('crash');
const clip = (name: string): Buffer => readFileSync(path.join(evalDir, 'vc/resemblyzer_librispeech', name));
const entries = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).sort() : []);
const startServer = (dataDir: string) => startServerProcess({ VOXD_API_KEYS: key, VOXD_PRELOAD_MODELS: 'false' }, { dataDir });

const createVoice = (base: string, name: string) => {
  const form = multipartBody({ name, consent: 'true' }, { files: { filename: 'a.wav', content: clip('3080-5032-0001.wav') } });
  return fetch(`${base}/v1/voices`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': form.contentType },
    body: form.body,
  });
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
    const creating = createVoice(first.base, 'Killed').then(
      (r) => r.status,
      () => 'connection lost',
    );
    const startedAt = Date.now();
    let killed = false;
    while (!killed && Date.now() - startedAt < 60_000) {
      const started = [
        ...entries(tmpDir)
          .filter((name) => name.endsWith('-voice'))
          .map((name) => path.join(tmpDir, name)),
        ...entries(voicesDir)
          .filter((name) => name !== kept)
          .map((name) => path.join(voicesDir, name)),
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
    const listed = (await (
      await fetch(`${second.base}/v1/voices?type=cloned`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as { voices: Array<{ voice_id: string }> };
    assert.deepEqual(
      listed.voices.map((v) => v.voice_id),
      [kept],
    );
    assert.match(second.output(), /removed voice files that no voice record points at/);
    second.child.kill('SIGKILL');
  });
});

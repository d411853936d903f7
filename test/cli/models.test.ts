/** `voxd models` as users run it, in a models directory of its own: Piper voices listed, pulled by language, failing offline. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { lookup } from 'node:dns/promises';
import { homedir } from 'node:os';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, test } from 'node:test';
import * as tar from 'tar';
import { packageRoot } from '../../src/core/version.js';
import { makeTempDir } from '../helpers/app.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI from source in a fresh data and models directory, no local model copies. */
function voxd(dir: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(packageRoot, 'src/cli/main.ts'), ...args],
      {
        cwd: packageRoot,
        env: {
          ...process.env,
          VOXD_DATA_DIR: dataDir,
          VOXD_MODELS_DIR: path.join(dir, 'models'),
          VOXD_LOCAL_MODEL_DIRS: '',
          VOXD_MODEL_MIRRORS: '',
          VOXD_LOG_LEVEL: 'silent',
          ...env,
        },
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A loopback URL nothing listens on. */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/`;
}

describe('voxd models', () => {
  test('list: every Piper voice with its language, quality and licence; --tts-language: that language best first', {
    timeout: 120_000,
  }, async (t) => {
    const dir = makeTempDir('cli-models');
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const all = await voxd(dir, ['models', 'list']);
    assert.equal(all.code, 0, all.stderr);
    const rows = all.stdout
      .trim()
      .split('\n')
      .map((line) => line.split('\t'));
    const row = (id: string): string[] | undefined => rows.find((r) => r[0] === id);
    assert.equal(rows.filter((r) => r[0]!.startsWith('piper-')).length, 97);
    // id, task, state, size, language, quality, licence, description
    assert.deepEqual(row('piper-de_DE-thorsten-high'), [
      'piper-de_DE-thorsten-high',
      'tts',
      'missing',
      '113.9 MB',
      'de-de',
      'high',
      'see MODEL_CARD: https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/de/de_DE/thorsten/high/MODEL_CARD',
      'Piper voice thorsten: German (Germany), high quality, 1 speaker',
    ]);
    assert.deepEqual(row('piper-en_US-joe-medium')?.slice(4, 7), ['en-us', 'medium', 'MIT (voice), CC0 (dataset)']);
    assert.deepEqual(row('piper-en_GB-vctk-medium')?.slice(4, 6), ['en-gb', 'medium']);
    assert.match(row('piper-en_GB-vctk-medium')![7]!, /English \(Great Britain\), medium quality, 109 speakers$/);
    // Models that are not voices of one language say so with '-'.
    assert.deepEqual(row('kokoro-82m')?.slice(4, 6), ['-', '-']);
    const german = await voxd(dir, ['models', 'list', '--tts-language', 'de_DE']);
    assert.equal(german.code, 0, german.stderr);
    assert.deepEqual(
      german.stdout
        .trim()
        .split('\n')
        .map((line) => line.split('\t')[0]),
      [
        'piper-de_DE-thorsten-high',
        'piper-de_DE-thorsten-medium',
        'piper-de_DE-thorsten_emotional-medium',
        'piper-de_DE-karlsson-low',
        'piper-de_DE-kerstin-low',
        'piper-de_DE-pavoque-low',
        'piper-de_DE-ramona-low',
        'piper-de_DE-thorsten-low',
        'piper-de_DE-eva_k-x_low',
      ],
    );
  });

  test('pull --tts-language de without network: exits non-zero naming the model, the URL and `voxd models import`; nothing left', {
    timeout: 120_000,
  }, async (t) => {
    const dir = makeTempDir('cli-models');
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const published = 'https://huggingface.co/rhasspy/piper-voices/resolve/v1.0.0/';
    // This host reaches the package registries only. Where the published host answers, a port nothing listens on
    // stands in for it (as a mirror), so the test fails the same way there.
    const online = await lookup('huggingface.co').then(
      () => true,
      () => false,
    );
    const base = online ? await closedPort() : published;
    const r = await voxd(dir, ['models', 'pull', '--tts-language', 'de'], online ? { VOXD_MODEL_MIRRORS: `${published}=${base}` } : {});
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /piper-de_DE-thorsten-high: German \(Germany\), high quality, the best voice of its language/);
    const message = r.stderr.split('\n').find((line) => line.startsWith('voxd: '))!;
    assert.ok(message.startsWith("voxd: model_unavailable: Could not obtain model 'piper-de_DE-thorsten-high': url: GET "), message);
    assert.ok(message.includes(`${base}de/de_DE/thorsten/high/de_DE-thorsten-high.onnx: `), message);
    assert.match(message, /`voxd models import FILE`/);
    assert.match(message, /VOXD_LOCAL_MODEL_DIRS/);
    // Nothing half-installed: no voice directory, no staging area, no download cache.
    const modelsDir = path.join(dir, 'models');
    assert.deepEqual(existsSync(modelsDir) ? readdirSync(modelsDir) : [], []);
  });

  test('pull --needed on an API-only node: nothing to pull, exits 0 (the image entrypoint runs it on every start)', {
    timeout: 60_000,
  }, async (t) => {
    const dir = makeTempDir('cli-models');
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const r = await voxd(dir, ['models', 'pull', '--needed'], { VOXD_ROLE: 'api' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /models: 0 installed and verified/);
    const modelsDir = path.join(dir, 'models');
    assert.deepEqual(existsSync(modelsDir) ? readdirSync(modelsDir) : [], []);
  });

  test('export --needed: the archive holds the models this node loads, not every installed one; none to load is an error', {
    timeout: 120_000,
  }, async (t) => {
    const dir = makeTempDir('cli-models');
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    // The installed models (setup put them there), only read: a separation worker loads three of them.
    const installed = { VOXD_MODELS_DIR: process.env.VOXD_MODELS_DIR ?? path.join(homedir(), '.cache/voxd/models') };
    const file = path.join(dir, 'models.tar.gz');
    const r = await voxd(dir, ['models', 'export', '--needed', file], {
      ...installed,
      VOXD_ROLE: 'worker',
      VOXD_WORKER_OPERATIONS: 'separate',
    });
    assert.equal(r.code, 0, r.stderr);
    const entries = new Set<string>();
    await tar.t({ file, onReadEntry: (entry) => void entries.add(entry.path.split('/')[0]!) });
    assert.deepEqual([...entries].filter((name) => !name.startsWith('.') && name !== 'voxd-models.json').sort(), [
      'deepfilternet3',
      'dtln',
      'spleeter-2stems',
    ]);

    const none = await voxd(dir, ['models', 'export', '--needed', path.join(dir, 'none.tar.gz')], { ...installed, VOXD_ROLE: 'api' });
    assert.equal(none.code, 1);
    assert.match(none.stderr, /invalid_request: This node loads no models \(an API-only node\): nothing to export/);
    assert.equal(existsSync(path.join(dir, 'none.tar.gz')), false);
  });

  test('pull --tts-language of a language no voice speaks: a clear error listing the languages there are', {
    timeout: 60_000,
  }, async (t) => {
    const dir = makeTempDir('cli-models');
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const r = await voxd(dir, ['models', 'pull', '--tts-language', 'de-at']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /voxd: not_found: No voice model in the catalog speaks 'de-at'\. Voice models' languages: ca-es, .*de-de, /);
  });
});

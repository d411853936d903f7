/**
 * Analyses of built-in voices (speaker embeddings, voice-conversion statistics). They depend only on the model files,
 * so they are computed once per model install (by `voxd models pull`, or in the background at start) and kept beside
 * the models, under a directory named by the fingerprint of those files: new model files start a new directory. Each
 * analysis has an index naming its files with their sha256, checked on every read; a damaged or partial one is
 * computed again.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

export type Derived = { analysis: Record<string, unknown>; files: Record<string, Buffer> };

interface Index {
  analysis: Record<string, unknown>;
  /** File name -> sha256. */
  files: Record<string, string>;
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Written under a temporary name and renamed: readers (another process preparing the same voice) never see half a file. */
async function writeAtomically(filePath: string, bytes: Uint8Array): Promise<void> {
  const temporary = `${filePath}.${randomUUID()}.tmp`;
  await writeFile(temporary, bytes);
  await rename(temporary, filePath);
}

export class BuiltinAnalysisStore {
  /** Analyses computed (not read) by this process. */
  computed = 0;

  constructor(
    /** e.g. `<models dir>/.builtin-voices/<fingerprint>`. */
    readonly dir: string,
    /** Called for each analysis computed (not read): what shows that a request did the work. */
    private readonly onComputed: (name: string) => void = () => undefined,
  ) {}

  /** The stored analysis, or undefined when absent or failing its check. */
  async read(voiceId: string, name: string): Promise<Derived | undefined> {
    const base = path.join(this.dir, voiceId, name);
    let index: Index;
    try {
      index = JSON.parse(await readFile(`${base}.json`, 'utf8')) as Index;
    } catch {
      return undefined;
    }
    const files: Record<string, Buffer> = {};
    for (const [file, digest] of Object.entries(index.files)) {
      const bytes = await readFile(`${base}-${file}`).catch(() => undefined);
      if (!bytes || sha256(bytes) !== digest) return undefined;
      files[file] = bytes;
    }
    return { analysis: index.analysis, files };
  }

  /** Files first, the index last: an interrupted write is simply computed again. */
  async write(
    voiceId: string,
    name: string,
    derived: { analysis: Record<string, unknown>; files: Record<string, Uint8Array> },
  ): Promise<Derived> {
    const base = path.join(this.dir, voiceId, name);
    await mkdir(path.dirname(base), { recursive: true });
    const files: Record<string, Buffer> = {};
    const digests: Record<string, string> = {};
    for (const [file, bytes] of Object.entries(derived.files)) {
      await writeAtomically(`${base}-${file}`, bytes);
      files[file] = Buffer.from(bytes);
      digests[file] = sha256(bytes);
    }
    await writeAtomically(`${base}.json`, Buffer.from(JSON.stringify({ analysis: derived.analysis, files: digests } satisfies Index)));
    this.computed++;
    this.onComputed(name);
    return { analysis: derived.analysis, files };
  }
}

/** Raised when what the analyses compute changes (reference text, analysis steps): stored ones are then computed again. */
const analysisVersion = 3;

/** The store's directory for these model files (their catalog hashes) under a models directory. */
export function builtinAnalysisDir(modelsDir: string, fileHashes: string[]): string {
  const fingerprint = createHash('sha256').update(JSON.stringify({ fileHashes, analysisVersion })).digest('hex').slice(0, 16);
  return path.join(modelsDir, '.builtin-voices', fingerprint);
}

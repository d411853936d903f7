/** A model loaded once and shared: on first use, or at start when preloading. Readiness reports its state. */
import type { ModelManager } from './manager.js';

/** A failed load is tried again when readiness is asked, at most this often (a model pulled meanwhile is then picked up). */
const retryIntervalMilliseconds = 5_000;

export interface ModelState {
  id: string;
  operations: string[];
  loaded: boolean;
  error?: string;
}

/** Ready when every model of the node's operations is loaded. */
export interface Readiness {
  ready: boolean;
  models: ModelState[];
}

export class LoadedModel<T> {
  private pending: Promise<T> | undefined;
  private loaded = false;
  private lastError: string | undefined;
  private lastAttemptAt = 0;
  private closed = false;

  constructor(
    readonly id: string,
    /** Operations that cannot run without it. */
    readonly operations: string[],
    /** The catalog models its load requires: what setup pulls for the operations a node runs. */
    readonly modelIds: readonly string[],
    private readonly load: () => Promise<T>,
    private readonly release: (model: T) => Promise<void> = async () => undefined,
  ) {}

  get(): Promise<T> {
    // After close() (shutdown) nothing loads again: a model runtime started while the process exits can abort it.
    if (this.closed) return Promise.reject(new Error(`'${this.id}' is closed: the process is shutting down.`));
    this.lastAttemptAt = Date.now();
    this.pending ??= this.load().then(
      (model) => {
        this.loaded = true;
        this.lastError = undefined;
        return model;
      },
      (error: unknown) => {
        // A failed load is retried on the next use (e.g. after `voxd models pull`).
        this.pending = undefined;
        this.lastError = (error as Error).message;
        throw error;
      },
    );
    return this.pending;
  }

  /** Starts another load after a failed one (not more often than every few seconds); readiness calls it on every probe. */
  retryFailed(): void {
    if (this.lastError === undefined || this.pending || Date.now() - this.lastAttemptAt < retryIntervalMilliseconds) return;
    this.get().catch(() => undefined);
  }

  state(): ModelState {
    return { id: this.id, operations: this.operations, loaded: this.loaded, ...(this.lastError ? { error: this.lastError } : {}) };
  }

  async close(): Promise<void> {
    this.closed = true;
    // A load still under way (e.g. preloading) is waited for, so what it starts (a worker thread) is released too.
    const model = await this.pending?.catch(() => undefined);
    this.pending = undefined;
    this.loaded = false;
    if (model !== undefined) await this.release(model);
  }
}

/** What an engine's load gets: the directories of the catalog models it declares, and the threads each model may use. */
export interface EngineLoadContext {
  dir(modelId: string): string;
  /** The directory of a model it uses only when installed (verified then), else undefined. */
  installedDir(modelId: string): Promise<string | undefined>;
  threads: number;
}

/**
 * An engine as its operation's registry lists it (`operations/<operation>/engines/registry.ts`): the catalog models its
 * load requires and how it loads. The container makes one LoadedModel of each; readiness, `models pull --needed` and the
 * operation's service iterate them.
 */
export interface EngineEntry<T> {
  id: string;
  /** Operations that cannot run without it. */
  operations: readonly string[];
  modelIds: readonly string[];
  load(context: EngineLoadContext): Promise<T>;
  release?(engine: T): Promise<void>;
}

/**
 * An engine loaded from catalog models: each of `modelIds` is required (installed and verified) first, and the loader
 * gets their directories by id; asking for one it did not declare is an error, so the declared ids are what it uses.
 */
export function loadedFromCatalog<T>(
  models: Pick<ModelManager, 'require' | 'installed'>,
  entry: EngineEntry<T>,
  threads: number,
): LoadedModel<T> {
  return new LoadedModel(
    entry.id,
    [...entry.operations],
    entry.modelIds,
    async () => {
      const dirs = new Map(await Promise.all(entry.modelIds.map(async (modelId) => [modelId, await models.require(modelId)] as const)));
      const dir = (modelId: string): string => {
        const found = dirs.get(modelId);
        if (found === undefined)
          throw new Error(`'${entry.id}' loads '${modelId}', which it does not declare among its models (${entry.modelIds.join(', ')}).`);
        return found;
      };
      const installedDir = async (modelId: string): Promise<string | undefined> =>
        (await models.installed(modelId)) ? models.require(modelId) : undefined;
      return entry.load({ dir, installedDir, threads });
    },
    entry.release ? (engine) => entry.release!(engine) : undefined,
  );
}

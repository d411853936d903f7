/** A model loaded once and shared: on first use, or at start when preloading. Readiness reports its state. */
import type { ModelManager } from './manager.js';

/** A failed load is tried again when readiness is asked, at most this often (a model pulled meanwhile is then picked up). */
const retryIntervalMilliseconds = 5_000;

export class LoadedModel<T> {
  private pending: Promise<T> | undefined;
  private loaded = false;
  private lastError: string | undefined;
  private lastAttemptAt = 0;

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

  state(): { id: string; operations: string[]; loaded: boolean; error?: string } {
    return { id: this.id, operations: this.operations, loaded: this.loaded, ...(this.lastError ? { error: this.lastError } : {}) };
  }

  async close(): Promise<void> {
    // A load still under way (e.g. preloading) is waited for, so what it starts (a worker thread) is released too.
    const model = await this.pending?.catch(() => undefined);
    this.pending = undefined;
    this.loaded = false;
    if (model !== undefined) await this.release(model);
  }
}

/**
 * A model loaded from catalog models: each of `modelIds` is required (installed and verified) first, and the loader
 * gets their directories by id; asking for one it did not declare is an error, so the declared ids are what it uses.
 */
export function loadedFromCatalog<T>(
  models: ModelManager,
  spec: { id: string; operations: string[]; modelIds: readonly string[]; load: (dir: (modelId: string) => string) => Promise<T>; release?: (model: T) => Promise<void> },
): LoadedModel<T> {
  return new LoadedModel(spec.id, spec.operations, spec.modelIds, async () => {
    const dirs = new Map(await Promise.all(spec.modelIds.map(async (modelId) => [modelId, await models.require(modelId)] as const)));
    return spec.load((modelId) => {
      const dir = dirs.get(modelId);
      if (dir === undefined) throw new Error(`'${spec.id}' loads '${modelId}', which it does not declare among its models (${spec.modelIds.join(', ')}).`);
      return dir;
    });
  }, spec.release);
}

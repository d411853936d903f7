/** A model loaded once and shared: on first use, or at start when preloading. Readiness reports its state. */
export class LoadedModel<T> {
  private pending: Promise<T> | undefined;
  private loaded = false;
  private lastError: string | undefined;

  constructor(
    readonly id: string,
    /** Operations that cannot run without it. */
    readonly operations: string[],
    private readonly load: () => Promise<T>,
    private readonly release: (model: T) => Promise<void> = async () => undefined,
  ) {}

  get(): Promise<T> {
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

/** A background loop: runs `tick` when woken or when the delay it asked for is over; never two ticks at once. */
export class PollLoop {
  private timer: NodeJS.Timeout | undefined;
  private dueAt = Number.POSITIVE_INFINITY;
  private running: Promise<void> | undefined;
  private stopped = true;

  /** `tick` returns how long to wait before the next tick (a wake-up may come sooner). */
  constructor(private readonly tick: () => Promise<number>) {}

  start(): void {
    this.stopped = false;
    this.wakeIn(0);
  }

  /** Ticks within `milliseconds` (or sooner, if already due sooner). */
  wakeIn(milliseconds: number): void {
    if (this.stopped) return;
    const at = Date.now() + Math.max(0, milliseconds);
    if (this.timer && at >= this.dueAt) return;
    clearTimeout(this.timer);
    this.dueAt = at;
    // Not unref'd: a running loop is what keeps a worker process (no HTTP server) alive; stop() ends it.
    this.timer = setTimeout(() => this.fire(), at - Date.now());
  }

  /** Stops ticking and waits for a tick under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private fire(): void {
    this.timer = undefined;
    this.dueAt = Number.POSITIVE_INFINITY;
    // A wake-up during a tick is honoured right after it.
    if (this.running) {
      this.wakeIn(10);
      return;
    }
    this.running = this.tick()
      .then((next) => this.wakeIn(next))
      .finally(() => (this.running = undefined));
  }
}

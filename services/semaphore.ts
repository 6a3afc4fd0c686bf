/**
 * At most `limit` tasks run at once; up to `queue` more wait their turn; past that `run` refuses at once
 * (`undefined` from `tryRun`'s point of view: the caller decides what a refusal means).
 */
export class Semaphore {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly limit: number,
    private readonly queue: number,
  ) {}

  /** Runs `task` when a slot is free; `refused()` is thrown instead when the queue is full. */
  async run<T>(task: () => Promise<T>, refused: () => Error): Promise<T> {
    if (this.running >= this.limit) {
      if (this.waiting.length >= this.queue) throw refused();
      // The releasing task hands its slot over, so `running` stays counted.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}

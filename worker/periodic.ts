/**
 * A background pass run every `intervalMs` in a worker process, one at a time: a tick while the last pass still
 * runs is skipped. A failure goes to `onError` and the next tick tries again. `stop()` ends the ticks and waits
 * for a pass under way.
 */
export function every(
  intervalMs: number,
  pass: () => Promise<unknown>,
  opts: { runAtStart?: boolean; onError(err: unknown): void },
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const tick = () => {
    running ??= pass()
      .then(() => undefined, opts.onError)
      .finally(() => (running = undefined));
  };
  if (opts.runAtStart) tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

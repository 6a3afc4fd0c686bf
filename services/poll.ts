import { setTimeout as sleep } from 'node:timers/promises';

// How long a sandbox route or CLI command waits for a workflow to act on its signal before answering with what
// it sees: the worker normally acts in well under a second.
export const WORKFLOW_WAIT_MS = 10_000;

/**
 * Reads until `done` holds or `timeoutMs` has passed, and returns the last read. `read` must look past the
 * identity map (a fresh fork or a plain query), or it would keep seeing the row from before the signal.
 */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  opts: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? WORKFLOW_WAIT_MS);
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() >= deadline) return value;
    await sleep(opts.intervalMs ?? 100);
  }
}

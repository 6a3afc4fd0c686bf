// A closed-loop load generator: `concurrency` clients, each running the next task as soon as its previous
// one finished, until `total` tasks ran. No dependency: timings with process.hrtime, percentiles by
// nearest rank over every sample (no histogram buckets, no coordinated-omission correction: a closed loop
// measures what its clients saw).

export interface Stats {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of ascending `sorted`. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((s, v) => s + v, 0);
  return {
    count: sorted.length,
    mean: sorted.length ? sum / sorted.length : NaN,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
  };
}

export function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

export const now = (): number => Number(process.hrtime.bigint()) / 1e6;

/** Records named latency samples (ms) inside a task: `await rec.time('post', () => ...)`. */
export class Recorder {
  readonly samples = new Map<string, number[]>();

  add(name: string, ms: number): void {
    let list = this.samples.get(name);
    if (!list) this.samples.set(name, (list = []));
    list.push(ms);
  }

  async time<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const t0 = now();
    const result = await fn();
    this.add(name, now() - t0);
    return result;
  }

  stats(name: string): Stats {
    return stats(this.samples.get(name) ?? []);
  }
}

export interface LoadResult {
  /** Tasks that resolved. */
  ok: number;
  /** Tasks that threw; the first few messages are kept. */
  errors: number;
  errorSamples: string[];
  wallMs: number;
  /** Completed tasks per second of wall time. */
  perSecond: number;
  rec: Recorder;
}

/**
 * Runs `task(i, rec, client)` for i = 0 … total-1 on `concurrency` concurrent clients. Each task times what it
 * wants through `rec`; a thrown error counts as an error and the client carries on.
 */
export async function closedLoop(opts: {
  concurrency: number;
  total: number;
  /** Keep going past `total` until this much time has passed (short phases are all noise). */
  minMs?: number;
  /** `client` is 0 … concurrency-1: which of the concurrent clients runs this task. */
  task: (i: number, rec: Recorder, client: number) => Promise<void>;
}): Promise<LoadResult> {
  const rec = new Recorder();
  let next = 0;
  let ok = 0;
  let errors = 0;
  const errorSamples: string[] = [];
  const t0 = now();
  const client = async (_: unknown, clientIndex: number) => {
    for (;;) {
      const i = next++;
      if (i >= opts.total && (!opts.minMs || now() - t0 >= opts.minMs)) return;
      try {
        await opts.task(i, rec, clientIndex);
        ok++;
      } catch (err) {
        errors++;
        if (errorSamples.length < 5) errorSamples.push(err instanceof Error ? err.message : String(err));
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, client));
  const wallMs = now() - t0;
  return { ok, errors, errorSamples, wallMs, perSecond: (1000 * ok) / wallMs, rec };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `n` calls of `task` started at `rate` a second from now, whatever their answers take (an open loop). */
export async function paced<T>(n: number, rate: number, task: () => Promise<T>): Promise<T[]> {
  const t0 = now();
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      await sleep(Math.max(0, t0 + (i * 1000) / rate - now()));
      return task();
    }),
  );
}

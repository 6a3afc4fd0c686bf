// What the Temporal dev server did during a phase, from its own Prometheus counters (`--metrics-port`): how many
// workflow and activity tasks, starts and signals an operation cost it, how many starts were eager (their first
// workflow task came back in the start's answer instead of through matching), and how many tasks matching had to
// write to its backlog because no poller was waiting. With BENCH_TEMPORAL_METRICS=1 (bench/lib/stack.ts).

/** One counter the benches read: its metric, and the labels a sample must carry to count. */
interface Counter {
  name: string;
  metric: string;
  labels: Record<string, string>;
}

// Only the application's namespace: the server's own system workflows run beside it.
const FRONTEND = { namespace: 'default', service_name: 'frontend' };
const COUNTERS: Counter[] = [
  { name: 'starts', metric: 'service_requests', labels: { ...FRONTEND, operation: 'StartWorkflowExecution' } },
  { name: 'eager starts', metric: 'workflow_eager_execution', labels: { namespace: 'default' } },
  { name: 'signals', metric: 'service_requests', labels: { ...FRONTEND, operation: 'SignalWorkflowExecution' } },
  {
    name: 'workflow tasks',
    metric: 'service_requests',
    labels: { ...FRONTEND, operation: 'RespondWorkflowTaskCompleted' },
  },
  {
    name: 'activity tasks',
    metric: 'service_requests',
    labels: { ...FRONTEND, operation: 'RespondActivityTaskCompleted' },
  },
  {
    name: 'tasks into the backlog',
    metric: 'persistence_requests',
    labels: { namespace: 'default', service_name: 'matching', operation: 'CreateTasks' },
  },
  {
    name: 'history writes',
    metric: 'persistence_requests',
    labels: { namespace: 'default', service_name: 'history', operation: 'UpdateWorkflowExecution' },
  },
];

export const TEMPORAL_COUNTERS: readonly string[] = COUNTERS.map((c) => c.name);

export type TemporalCounts = Record<string, number>;

/** `name{a="x",b="y"} 12` → the metric, its labels and its value; undefined for comments and other lines. */
export function parseSample(
  line: string,
): { metric: string; labels: Record<string, string>; value: number } | undefined {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
  if (!m) return undefined;
  const labels: Record<string, string> = {};
  for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
  const value = Number(m[3]);
  return Number.isFinite(value) ? { metric: m[1], labels, value } : undefined;
}

/** The counters summed over every sample whose labels include the counter's. */
export function countsOf(text: string): TemporalCounts {
  const counts: TemporalCounts = Object.fromEntries(COUNTERS.map((c) => [c.name, 0]));
  for (const line of text.split('\n')) {
    const sample = parseSample(line);
    if (!sample) continue;
    for (const c of COUNTERS) {
      if (c.metric !== sample.metric) continue;
      if (Object.entries(c.labels).every(([k, v]) => sample.labels[k] === v)) counts[c.name] += sample.value;
    }
  }
  return counts;
}

/** The server's counters now. */
export async function readTemporalCounts(metricsUrl: string): Promise<TemporalCounts> {
  const res = await fetch(metricsUrl);
  if (!res.ok) throw new Error(`Temporal metrics at ${metricsUrl}: HTTP ${res.status}`);
  return countsOf(await res.text());
}

/** What happened between two readings. */
export function countsBetween(before: TemporalCounts, after: TemporalCounts): TemporalCounts {
  return Object.fromEntries(TEMPORAL_COUNTERS.map((n) => [n, (after[n] ?? 0) - (before[n] ?? 0)]));
}

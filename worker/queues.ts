import type { WorkerOptions } from '@temporalio/worker';
import type { Config, WorkerQueue } from '../config';
import { railHeartbeats } from './rail-heartbeats';

// The worker's database pool, and so how many activities of the main queue it runs at once.
export const WORKER_POOL_SIZE = 20;

/**
 * Workflow tasks a worker takes at once on the main and webhook queues. Task Queue Fairness orders only what waits
 * in the task queue: a worker that takes forty tasks at once (the SDK's default) moves the backlog into its own
 * process, where tasks wait for the workflow thread in arrival order, and one customer's flood runs ahead of
 * everyone again. Measured with `BENCH_MODE=fair npm run bench:operations` (docs/decisions/0088).
 */
export const FAIR_WORKFLOW_TASK_SLOTS = 8;

/**
 * Workflow task pollers of the main and webhook queues, sticky and not (half each). A poller holds a slot while it
 * waits, and a relay's eager start needs a slot no poller holds: with the SDK's ten pollers on eight slots every
 * eager start was refused, and each first workflow task went through the task queue (25 to 30 ms with an idle
 * worker). Four leave half the slots free when the worker is idle. Busy, freed slots go to the pollers waiting for
 * them first, so starts then go through the task queue and its fairness (docs/decisions/0095).
 */
export const WORKFLOW_TASK_POLLERS = 4;
const workflowTaskPollerBehavior = { type: 'simple-maximum', maximum: WORKFLOW_TASK_POLLERS } as const;

export interface QueueRole {
  role: WorkerQueue;
  taskQueue: string;
}

/** The task queues this process serves (WORKER_QUEUES), each with its name. */
export function servedQueues(config: Config): QueueRole[] {
  return config.workerQueues.map((role) => ({
    role,
    taskQueue: { main: config.taskQueue, webhooks: config.webhookTaskQueue, rails: config.railsTaskQueue }[role],
  }));
}

/**
 * Slot and cache sizes of each queue's worker. The main queue moves money: its activities and local activities
 * are transactions on the process's pool of WORKER_POOL_SIZE connections. The webhook queue runs delivery
 * workflows and their attempts, which wait on receivers, not on the database (docs/decisions.md, "Webhook
 * isolation and delivery throughput").
 */
export function queueWorkerOptions(role: WorkerQueue): Partial<WorkerOptions> {
  if (role === 'rails') {
    // Provider calls (rails/): each waits on the PSP, bounded by PIX_TIMEOUT_MS, and holds no database
    // connection. 32 slots: a PSP that hangs fills these, never the main queue's, which settle money. Each
    // heartbeats while it runs, so a worker lost during one is noticed in seconds (worker/rail-heartbeats.ts).
    return { maxConcurrentActivityTaskExecutions: 32, interceptors: { activity: [railHeartbeats] } };
  }
  if (role === 'webhooks') {
    return {
      // An attempt holds no database connection during its POST (a read before, a write after, each one
      // statement on a pooled connection), so its slots are bounded by what may wait on receivers at once, not by
      // the pool. 64: one subscription holds at most WEBHOOK_ENDPOINT_CONCURRENCY (4), so sixteen endpoints that
      // all hang would be needed to fill them, and the rest are sockets and timers (a few KB each). At most 20 of
      // them can want a connection at the same moment, for one statement each (well under a millisecond).
      maxConcurrentActivityTaskExecutions: 64,
      // Nothing on this queue runs a local activity; a small bound in case a future change adds one by mistake.
      maxConcurrentLocalActivityExecutions: 4,
      // A delivery is two short workflow tasks (start and schedule the attempt; finish or set a timer), CPU only:
      // more at once than the workflow thread gets through only queue here, first come first served, instead of
      // in the task queue, where Temporal hands them out round-robin across customers (FAIR_WORKFLOW_TASK_SLOTS).
      maxConcurrentWorkflowTaskExecutions: FAIR_WORKFLOW_TASK_SLOTS,
      // The second task of a delivery finds it cached when its attempt took less than the time 50 others need:
      // most of them, saturated. Deliveries waiting on a retry timer are replayed from their short histories.
      maxCachedWorkflows: 50,
      // Half of the workflow task pollers on the queue itself (first tasks come only from there), as the main
      // queue; 10 activity pollers (the SDK's default) keep 64 slots fed at the rates measured here.
      nonStickyToStickyPollRatio: 0.5,
      workflowTaskPollerBehavior,
      maxConcurrentActivityTaskPolls: 10,
    };
  }
  return {
    // The sticky cache holds ~1 MB per workflow (SDK guidance), and most open workflows are idle: deposits
    // waiting for a payment, reviews waiting for a decision. They replay from their short histories when they
    // wake; the tens that work at a given moment stay cached. Measured sizes: docs/decisions.md, "Sticky cache".
    maxCachedWorkflows: 50,
    // Every activity is one database transaction on this process's pool (db/orm.ts, 20 connections). More
    // activities at once than connections only queue inside the pool while their 10 s start-to-close timeout runs
    // (the SDK's default is 100); the backlog waits in the task queue instead, where another worker can take it.
    maxConcurrentActivityTaskExecutions: WORKER_POOL_SIZE,
    // Local activities (swap and transfer settlement) are transactions on the same pool: the same bound.
    maxConcurrentLocalActivityExecutions: WORKER_POOL_SIZE,
    // Half of the workflow task pollers on the task queue itself, half on this worker's sticky queue (the SDK's
    // default gives the task queue 2 of 10). Almost every workflow task here is a workflow's first: a transfer and
    // a swap are one task each; a deposit or a review waits idle after its first. First tasks come only from the
    // task queue, so with 2 pollers they queued there while the machine had CPU to spare.
    nonStickyToStickyPollRatio: 0.5,
    // A workflow task holds its slot while its local activities (settlement) run, so a few slots keep the
    // workflow thread and those transactions busy; the rest of a backlog waits in the task queue, where it is fair.
    maxConcurrentWorkflowTaskExecutions: FAIR_WORKFLOW_TASK_SLOTS,
    workflowTaskPollerBehavior,
  };
}

import type { WorkerOptions } from '@temporalio/worker';
import type { Config, WorkerQueue } from '../config';
import { railHeartbeats } from './rail-heartbeats';

// The worker's database pool, and so how many activities of the main queue it runs at once.
export const WORKER_POOL_SIZE = 20;

/**
 * Workflow tasks a worker takes at once on the main and webhook queues. Task Queue Fairness orders only what waits
 * in the task queue: a worker that takes forty tasks at once (the SDK's default) moves the backlog into its own
 * process, where tasks wait for the workflow thread in arrival order, and one customer's flood runs ahead of
 * everyone again. A waiting poller holds a slot too, so under load first tasks get the slots the sticky poller does
 * not hold: five. Measured with `BENCH_MODE=fair npm run bench:operations` (docs/decisions/0088, 0095).
 */
const FAIR_WORKFLOW_TASK_SLOTS = 6;

/**
 * Workflow task pollers of the main and webhook queues: two on the task queue (where every first task comes from)
 * and one on the worker's sticky queue (a deposit's or a delivery's later tasks). A poller holds a slot while it
 * waits, and a relay's eager start needs a slot no poller holds: with the SDK's ten pollers every slot was held and
 * every eager start refused, so each first task went through the task queue (25 to 30 ms with an idle worker).
 * Three leave an idle worker a slot for eager starts. A busy worker's pollers wait for slots and take freed ones
 * first, so under load starts go through the task queue and its fairness (docs/decisions/0095).
 */
const WORKFLOW_TASK_POLLERS = 3;

/** The slots and pollers together: eager starts need both numbers as they are (docs/decisions/0095). */
const fairWorkflowTasks = {
  maxConcurrentWorkflowTaskExecutions: FAIR_WORKFLOW_TASK_SLOTS,
  workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: WORKFLOW_TASK_POLLERS },
  // The SDK gives the task queue floor(3 * 0.7) = 2 of them and the sticky queue the rest.
  nonStickyToStickyPollRatio: 0.7,
} as const;

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
 * The per-customer window of a queue's relay (decision 0099): the configured one on the main queue, where operations
 * start; none on the webhook queue. The window counts a customer's operations, and a customer at it must not have
 * its webhook deliveries held back with them.
 */
export const relayWindow = (role: WorkerQueue, config: Config): number | undefined =>
  role === 'main' ? config.maxStartedOperationsPerCustomer : undefined;

/**
 * Slot and cache sizes of each queue's worker. The main queue moves money: its activities and local activities are
 * transactions on the process's pool of WORKER_POOL_SIZE connections. The webhook queue runs delivery workflows and
 * their attempts, which wait on receivers, not on the database (decisions 0057, 0059).
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
      ...fairWorkflowTasks,
      // The second task of a delivery finds it cached when its attempt took less than the time 50 others need:
      // most of them, saturated. Deliveries waiting on a retry timer are replayed from their short histories.
      maxCachedWorkflows: 50,
      // 10 activity pollers (the SDK's default) keep 64 slots fed at the rates measured here.
      maxConcurrentActivityTaskPolls: 10,
    };
  }
  return {
    // The sticky cache holds ~1 MB per workflow (SDK guidance), and most open workflows are idle: deposits
    // waiting for a payment, reviews waiting for a decision. They replay from their short histories when they
    // wake; the tens that work at a given moment stay cached. Measured sizes: decision 0038.
    maxCachedWorkflows: 50,
    // Every activity is one database transaction on this process's pool (db/orm.ts, 20 connections). More
    // activities at once than connections only queue inside the pool while their 10 s start-to-close timeout runs
    // (the SDK's default is 100); the backlog waits in the task queue instead, where another worker can take it.
    maxConcurrentActivityTaskExecutions: WORKER_POOL_SIZE,
    // Local activities (swap and transfer settlement) are transactions on the same pool: the same bound.
    maxConcurrentLocalActivityExecutions: WORKER_POOL_SIZE,
    // Almost every workflow task here is a workflow's first, which comes only from the task queue: a transfer and
    // a swap are one task each; a deposit or a review waits idle after its first. So most pollers are there. A
    // workflow task holds its slot while its local activities (settlement) run, so a few slots keep the workflow
    // thread and those transactions busy; the rest of a backlog waits in the task queue, where it is fair.
    ...fairWorkflowTasks,
  };
}

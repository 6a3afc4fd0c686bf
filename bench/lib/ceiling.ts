// The bare-workflow ceiling of bench:operations and bench:webhooks: a worker in the bench process, on a task queue
// of its own of the same Temporal server as Cambio's worker, running `ceilingWorkflow` (one no-op activity).
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { Stack } from './stack';

export interface CeilingWorker {
  /** Starts one ceiling workflow; resolves with its handle once Temporal accepted it. */
  start(temporal: Client): ReturnType<Client['workflow']['start']>;
  stop(): Promise<void>;
}

/**
 * `onNoop` runs inside the activity: a bench that counts completions by the activity itself hooks in here. With
 * `post`, the workflow is `ceilingPostWorkflow(post.url, post.body)`: its one activity POSTs the body (fetch, an
 * ordinary activity's HTTP call) and the bench counts arrivals at its receiver.
 */
export async function startCeilingWorker(
  stack: Stack,
  onNoop: () => void = () => {},
  postTo?: { url: string; body: string },
): Promise<CeilingWorker> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const taskQueue = `bench-ceiling-${process.pid}`;
  const connection = await NativeConnection.connect({ address: stack.temporalAddress });
  const worker = await Worker.create({
    connection,
    namespace: stack.namespace,
    taskQueue,
    workflowsPath: require.resolve('../ceiling-workflow'),
    activities: {
      async noop() {
        onNoop();
      },
      async post(url: string, body: string) {
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        await res.arrayBuffer();
        return res.status;
      },
    },
  });
  const running = worker.run();
  return {
    start: (temporal) =>
      postTo
        ? temporal.workflow.start('ceilingPostWorkflow', {
            taskQueue,
            workflowId: `ceiling-${randomUUID()}`,
            args: [postTo.url, postTo.body],
          })
        : temporal.workflow.start('ceilingWorkflow', { taskQueue, workflowId: `ceiling-${randomUUID()}`, args: [] }),
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

// A worker killed mid-delivery (SIGKILL while the receiver holds the POST open) loses nothing: a new worker
// process picks the delivery up and finishes it with the same message id and body.
import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import { tenantEm } from '../../db/orm';
import type { ServiceContext } from '../../api/services/context';
import { createBeneficiary } from '../../api/services/beneficiaries';
import { createSubscription } from '../../api/services/subscriptions';
import { getExecutionLog } from '../../api/services/execution-logs';
import { beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { Receiver } from '../helpers/receiver';
import { eventually, newCustomer, stack } from '../helpers/stack';

const ROOT = path.resolve(__dirname, '../..');

describe('webhook delivery across a worker crash', function () {
  this.timeout(180000);
  const children: ChildProcess[] = [];
  const output = new Map<ChildProcess, string>();
  let receiver: Receiver;

  /** `tsx worker/main.ts` in its own process group (tsx runs the worker in a grandchild, which must die too). */
  function spawnWorker(taskQueue: string): ChildProcess {
    const child = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), ['worker/main.ts'], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        TEMPORAL_TASK_QUEUE: taskQueue,
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_TIMEOUT_SECONDS: '30',
        LOG_LEVEL: 'warn',
      },
    });
    output.set(child, '');
    const keep = (chunk: Buffer) => output.set(child, (output.get(child)! + chunk.toString('utf8')).slice(-4000));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    children.push(child);
    return child;
  }

  async function kill(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
    await exited;
  }

  async function untilPolling(child: ChildProcess, taskQueue: string) {
    const { services, config } = await stack();
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`worker exited early (${child.exitCode}): ${output.get(child)}`);
        const res = await services.temporal.workflowService.describeTaskQueue({ namespace: config.temporalNamespace, taskQueue: { name: taskQueue } });
        return res.pollers?.length ?? 0;
      },
      (n) => n > 0,
      90000,
      250,
    );
  }

  before(async () => {
    receiver = await new Receiver().start();
  });

  after(async () => {
    await Promise.all(children.map(kill));
    await receiver?.stop();
  });

  it('finishes the delivery on a new worker with the same message id and body', async () => {
    const { services, config } = await stack();
    const taskQueue = `cambio-webhook-crash-${randomUUID()}`;
    const ctx: ServiceContext = { ...services, config: { ...config, taskQueue } };
    const c = await newCustomer('Crash Hooks SA');
    const em = () => tenantEm(services.orm, c.customerId);
    const sub = await createSubscription(ctx, em(), {
      url: receiver.url,
      resources: [{ name: 'BENEFICIARY', events: ['BENEFICIARY_PAYMENT_INSTRUCTION_CREATED'] }],
    });
    // The first POST hangs: the worker dies while it is in flight. The next one answers at once.
    receiver.script = [{ status: 200, delayMs: 60000 }];
    receiver.fallback = { status: 200 };

    const first = spawnWorker(taskQueue);
    await untilPolling(first, taskQueue);
    await createBeneficiary(ctx, em(), beneficiaryBody(pixInstruction('EMAIL', 'crash@example.com')) as never);
    await eventually(async () => receiver.received.length, (n) => n === 1, 30000, 20);
    await kill(first);
    expect(first.signalCode).to.equal('SIGKILL');
    const [row] = (await services.orm.em.fork().getConnection().execute('select id, attempts from execution_logs where subscription_id = ?', [sub.id])) as Array<{ id: string; attempts: number }>;
    expect(row.attempts, 'the attempt in flight was not recorded').to.equal(0);

    spawnWorker(taskQueue);
    await eventually(async () => receiver.received.length, (n) => n === 2, 120000, 100).catch((err: Error) => {
      throw new Error(`${err.message}\nworker output:\n${children.map((ch) => output.get(ch)).join('\n---\n')}`);
    });
    const [crashed, resumed] = receiver.received;
    expect(resumed.headers['webhook-id']).to.equal(crashed.headers['webhook-id']);
    expect(resumed.body).to.equal(crashed.body);
    const log = await eventually(() => getExecutionLog(em(), sub.id, row.id).catch(() => undefined), (l) => l?.status === 'SUCCESS');
    expect(log).to.include({ messageId: crashed.headers['webhook-id'], httpStatus: 200, retryAttempts: 0, payload: crashed.body });
  });
});

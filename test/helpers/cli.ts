import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { CrashPoint } from '../../services/crash-point';
import { stack } from './stack';
import { cliArgs } from './entries';

const run = promisify(execFile);

/** The operator CLI in its own process (entries.ts) on the stack's database and its three task queues. */
export async function cambio(...args: string[]) {
  return cambioWith({}, ...args);
}

/** `cambio` with `extra` in its environment (e.g. simulatorEnv(): a deployment with a PSP). */
export async function cambioWith(extra: Record<string, string>, ...args: string[]) {
  return runCambio(extra, args, 0);
}

/** `timeout` (ms, 0: none): the process is killed (SIGKILL) once it has run that long. */
async function runCambio(extra: Record<string, string>, args: string[], timeout: number) {
  const { config } = await stack();
  const env = {
    ...process.env,
    TEMPORAL_TASK_QUEUE: config.taskQueue,
    TEMPORAL_WEBHOOK_TASK_QUEUE: config.webhookTaskQueue,
    TEMPORAL_RAILS_TASK_QUEUE: config.railsTaskQueue,
    LOG_LEVEL: 'warn',
    CAMBIO_OPERATOR: 'test-operator',
    ...extra,
  };
  return run(process.execPath, [...cliArgs(), ...args], { env, timeout, killSignal: 'SIGKILL' });
}

/**
 * `cambioWith`, killed if it has not ended within `timeoutMs`: how it ended (`signal` SIGKILL: it hung), how long it
 * took, and the error body of a failure (stderr's last line), if any.
 */
export async function cambioWithin(timeoutMs: number, extra: Record<string, string>, ...args: string[]) {
  const started = Date.now();
  const ended = await runCambio(extra, args, timeoutMs).then(
    (r) => ({ code: 0, signal: null, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }) => e,
  );
  const last = ended.stderr.trim().split('\n').pop() ?? '';
  return {
    exitCode: ended.code,
    signal: ended.signal,
    seconds: (Date.now() - started) / 1000,
    stdout: ended.stdout,
    body: last.startsWith('{') ? JSON.parse(last) : undefined,
  };
}

/** A failing command's exit code and its error body (the API's error shape, on stderr). */
export async function cambioFails(...args: string[]) {
  return cambioFailsWith({}, ...args);
}

export async function cambioFailsWith(extra: Record<string, string>, ...args: string[]) {
  const err = await cambioWith(extra, ...args).then(
    () => undefined,
    (e: { code: number; stderr: string }) => e,
  );
  expect(err, `${args.join(' ')} fails`).to.not.equal(undefined);
  return { exitCode: err!.code, body: JSON.parse(err!.stderr.trim().split('\n').pop()!) };
}

/** The CLI killed (SIGKILL, by itself: services/crash-point.ts) at `point` of its action's transaction. */
export async function cambioKilledAt(point: CrashPoint, ...args: string[]) {
  const err = await cambioWith({ CAMBIO_TEST_CRASH_AT: point }, ...args).then(
    () => undefined,
    (e: { signal?: string }) => e,
  );
  expect(err?.signal, `${args.join(' ')} is killed at ${point}`).to.equal('SIGKILL');
}

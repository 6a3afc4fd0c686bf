import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { stack } from './stack';
import { cliArgs } from './entries';

const run = promisify(execFile);

/** The operator CLI as installed (the package bin, its own process) on the stack's database and Temporal. */
export async function cambio(...args: string[]) {
  return cambioWith({}, ...args);
}

/** `cambio` with `extra` in its environment (e.g. simulatorEnv(): a deployment with a PSP). */
export async function cambioWith(extra: Record<string, string>, ...args: string[]) {
  const { config } = await stack();
  const env = {
    ...process.env,
    TEMPORAL_TASK_QUEUE: config.taskQueue,
    TEMPORAL_RAILS_TASK_QUEUE: config.railsTaskQueue,
    LOG_LEVEL: 'warn',
    CAMBIO_OPERATOR: 'test-operator',
    ...extra,
  };
  return run(process.execPath, [...cliArgs(), ...args], { env });
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

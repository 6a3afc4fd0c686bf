// Every command of the operator CLI while Postgres is refused or stalls, or Temporal is refused (decisions 0102, 0177,
// 0228): it ends by itself within a bound, with exit code 1 and one SERVICE_UNAVAILABLE line in the error shape that
// says nothing was recorded, or (Temporal down, for a command that needs only Postgres) its own answer. Each
// dependency sits behind a proxy for the CLI processes alone; the commands name ids that exist nowhere, so none acts.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { cambioWithin } from '../helpers/cli';
import { postgresDown, temporalDown } from '../helpers/outages';

// A stalled Postgres costs a command its connect bound (DB_CONNECT_TIMEOUT_MS) twice: its own, its audit row's.
const ENDS_WITHIN_MS = 20_000;
const SIDE_BY_SIDE = 4;

const id = randomUUID;
const period = ['--from', '2026-01-01T00:00:00Z', '--to', '2026-02-01T00:00:00Z'];

/** One valid command line of each command, on ids that do not exist (`--json` where the command takes it). */
const COMMANDS: string[][] = [
  ['customer', 'create', '--name', 'Outage Sweep Ltda'],
  ['customer', 'disable', id()],
  ['customer', 'enable', id()],
  ['customer', 'rotate-secret', id()],
  ['account', 'approve', id()],
  ['account', 'reject', id(), '--reason', 'unreadable documents'],
  ['account', 'tag', id(), '--key', 'desk', '--value', 'north'],
  ['instruction', 'approve', id()],
  ['instruction', 'reject', id(), '--reason', 'wrong key'],
  ['deposit', 'replay', id()],
  ['deposit', 'pay', id(), '--amount', '1.00', '--asset', 'BRL', '--end-to-end', `E2E${Date.now()}`],
  ['operation', 'list', '--held'],
  ['operation', 'list', '--stuck'],
  ['withdrawal', 'approve', id()],
  ['withdrawal', 'reject', id(), '--reason', 'fraud'],
  ['webhook', 'redeliver', id()],
  ['report', '--customer', id(), ...period],
  ['payment', 'list'],
  ['payment', 'show', id()],
  ['payment', 'return', id(), '--reason', 'unknown payer'],
  ['payment', 'record', '--rail', 'TED', '--customer', id(), '--amount', '1.00', '--asset', 'BRL', '--reference', id()],
  ['payment', 'credit', id(), '--account', id()],
  ['schedule', 'list'],
  ['schedule', 'trigger', 'event-purge'],
  ['rates'],
  ['statement', id(), '--asset', 'BRL', ...period, '--format', 'json'],
  ['books', 'check'],
  ['audit', 'list'],
  ['audit', 'verify'],
];

/** The commands that reach Temporal (withTemporalServices, or a start or a PSP call that may): the others run. */
const NEEDS_TEMPORAL =
  /^(account (approve|reject)|instruction|deposit|withdrawal|schedule|payment (record|return)|webhook)/;

/**
 * One command of each way to Postgres, for the stall, where each costs its connect bounds: a read, an audited action
 * and its audit row (withServices, then the row on its own), a decision that asks Temporal first, the audit log.
 */
const ONE_OF_EACH_PATH = /^(payment list|customer disable|account approve|audit list|audit verify)$/;

type Ended = Awaited<ReturnType<typeof cambioWithin>> & { command: string };

/** Every command with `env`, SIDE_BY_SIDE at a time. */
async function sweep(env: Record<string, string>, which = /./): Promise<Ended[]> {
  const queue = COMMANDS.filter((args) => which.test(args.slice(0, 2).join(' ')));
  const ended: Ended[] = [];
  const lane = async () => {
    for (let args = queue.shift(); args; args = queue.shift()) {
      const line = args[0] === 'statement' ? args : [...args, '--json'];
      ended.push({ ...(await cambioWithin(ENDS_WITHIN_MS + 10_000, env, ...line)), command: args.join(' ') });
    }
  };
  await Promise.all(Array.from({ length: SIDE_BY_SIDE }, lane));
  return ended;
}

/** What is wrong with how a command ended while a dependency was down, or undefined. */
function fault(e: Ended, mayRun: boolean): string | undefined {
  const seen = `${e.command}: exit ${e.exitCode ?? e.signal} in ${e.seconds} s ${JSON.stringify(e.body)}`;
  if (e.signal !== null || e.seconds * 1000 > ENDS_WITHIN_MS) return `${seen}: did not end in time`;
  if (e.exitCode === 0) return mayRun ? undefined : `${seen}: ran without its dependency`;
  if (!e.body) return `${seen}: no error line in the error shape`;
  if (e.body.code === 'SERVICE_UNAVAILABLE') {
    if (e.body.details?.recorded !== false) return `${seen}: says it recorded something`;
    if (e.body.details?.retryAfterSeconds === undefined && !e.body.details?.temporalAddress) return `${seen}: details`;
    return undefined;
  }
  // A command that needs only Postgres, on an id that is nowhere: its own refusal, never an internal error.
  return mayRun && e.body.code !== 'INTERNAL_ERROR' ? undefined : seen;
}

const faultsOf = (ended: Ended[], mayRun: boolean) => {
  // SWEEP_PRINT=1 shows how each command ended.
  if (process.env.SWEEP_PRINT) console.log(ended.map((e) => `${e.command}: ${e.exitCode} ${e.seconds} s`).join('\n'));
  return ended.map((e) => fault(e, mayRun)).filter((f): f is string => f !== undefined);
};

describe('every operator CLI command while a dependency is down', function () {
  this.timeout(300_000);

  it('Postgres refused: SERVICE_UNAVAILABLE, nothing recorded', async () => {
    const { databaseUrl } = await postgresDown();
    const faults = faultsOf(await sweep({ DATABASE_URL: databaseUrl }), false);
    expect(faults, faults.join('\n')).to.deep.equal([]);
  });

  it('Postgres stalled: SERVICE_UNAVAILABLE within the connect bounds, on each path to Postgres', async () => {
    const { proxy, databaseUrl } = await postgresDown();
    await proxy.open();
    proxy.stall();
    try {
      const env = { DATABASE_URL: databaseUrl, DB_STATEMENT_TIMEOUT_MS: '2000' };
      const faults = faultsOf(await sweep(env, ONE_OF_EACH_PATH), false);
      expect(faults, faults.join('\n')).to.deep.equal([]);
    } finally {
      proxy.resume();
      await proxy.cut();
    }
  });

  it('Temporal refused: SERVICE_UNAVAILABLE from each command that needs it, nothing recorded', async () => {
    // Nothing listens behind the proxy: it is never opened.
    const { address } = await temporalDown();
    const faults = faultsOf(await sweep({ TEMPORAL_ADDRESS: address }, NEEDS_TEMPORAL), true);
    expect(faults, faults.join('\n')).to.deep.equal([]);
  });
});

import { presentInboundPayment } from '../../presenters/inbound-payment';
import type { Operation } from '../../db/entities';
import { presentOperation } from '../../presenters/operation';
import type { Command } from 'commander';
import { systemEm, tenantEm } from '../../db/orm';
import { OperationSchema } from '../../db/entities';
import { notFound } from '../../domain/errors';
import type { ServiceContext } from '../../services/context';
import { decideHold, replayDeposit } from '../../services/operations/signals';
import { reportInboundPayment } from '../../services/reported-payments';
import { heldWithdrawals, stuckPayouts } from '../../db/repositories/operations';
import type { AssetCode } from '../../domain/assets';
import { CambioError } from '../../domain/errors';
import { formatAmount } from '../../domain/money';
import { payeeOf, type Payee } from '../../domain/payee';
import { output, withServices, withTemporalServices } from '../context';
import { operatorActor } from '../audit';
import { targetId } from '../ids';

/** Operators act across customers: find the operation's customer, then act in that customer's scope. */
async function scopeOf(s: ServiceContext, operationId: string) {
  const op = await systemEm(s.orm).findOne(OperationSchema, { id: operationId });
  if (!op) throw notFound('operation');
  return tenantEm(s.orm, op.customerId);
}

const print = (json: boolean | undefined) => (op: Operation) => {
  const view = presentOperation(op);
  output(!!json, view, `operation ${view.id} is ${view.currentState.status}`);
};

const TEN_YEARS = 10 * 366 * 24 * 3600;

/** ` to <holder> by <rail> <key type> <key> [on <network>]`, or nothing for a row that pays nobody. */
function to(payee: Payee | undefined): string {
  if (!payee) return '';
  const { rail, keyType, key, network } = payee.paymentInstruction;
  return ` to ${payee.name} by ${rail} ${keyType} ${key}${network ? ` on ${network}` : ''}`;
}

export function operationCommands(program: Command): void {
  const deposit = program.command('deposit').description('deposits');
  deposit
    .command('replay <operationId>')
    .description('re-run a failed deposit reconciliation over every payment recorded so far')
    .option('--json', 'print JSON')
    .action(async (typed: string, opts: { json?: boolean }) => {
      const id = targetId(typed, 'operation');
      print(opts.json)(
        await withTemporalServices(async (s) => replayDeposit(s, await scopeOf(s, id), id, operatorActor())),
      );
    });
  deposit
    .command('pay <operationId>')
    .description(
      'record an inbound payment for a deposit (prints the payment as the deposit decided it); ' +
        'run again with the same reference, it is the same payment',
    )
    .requiredOption('--amount <value>', 'amount paid, e.g. 100.00')
    .requiredOption('--asset <asset>', 'asset paid, e.g. BRL')
    // Required: the rail's reference is what makes a rerun find the payment instead of recording it again.
    .requiredOption('--end-to-end <id>', "the rail's reference of the payment (PIX end-to-end id, bank statement ref)")
    .option('--json', 'print JSON')
    .action(async (typed: string, opts: { amount: string; asset: string; endToEnd: string; json?: boolean }) => {
      const id = targetId(typed, 'operation');
      const body = { amount: { value: opts.amount, asset: opts.asset as never }, endToEndId: opts.endToEnd };
      const payment = presentInboundPayment(
        await withTemporalServices(async (s) =>
          reportInboundPayment(s, await scopeOf(s, id), id, body, operatorActor()),
        ),
      );
      const { value, asset } = payment.amount;
      output(!!opts.json, payment, `payment ${payment.id} of ${value} ${asset} is ${payment.status}`);
    });

  const operation = program.command('operation').description('operations across customers');
  operation
    .command('list')
    .description(
      'list operations that need an operator, oldest first: --held, withdrawals ON_HOLD for a review decision; ' +
        '--stuck, withdrawals whose payout the PSP has not settled',
    )
    .option('--held', 'withdrawals ON_HOLD, waiting for `cambio withdrawal approve|reject`')
    .option('--stuck', 'withdrawals PROCESSING (money held, payout not settled) for longer than --older-than')
    .option(
      '--older-than <seconds>',
      'unchanged for at least this long (default: --stuck, STUCK_PAYOUT_AFTER_SECONDS, 300; --held, 0)',
    )
    .option('--json', 'print JSON')
    .action(async (opts: { held?: boolean; stuck?: boolean; olderThan?: string; json?: boolean }) => {
      if (!!opts.held === !!opts.stuck) {
        const errors = [{ path: '--held|--stuck', message: 'exactly one is required' }];
        throw new CambioError('VALIDATION_ERROR', 'operation list takes one of --stuck or --held', { errors });
      }
      // Whole seconds, up to ten years: a larger figure is no date a payout could be older than.
      if (opts.olderThan !== undefined && !(/^\d+$/.test(opts.olderThan) && Number(opts.olderThan) <= TEN_YEARS)) {
        const errors = [{ path: '--older-than', message: `must be whole seconds, at most ${TEN_YEARS}` }];
        throw new CambioError('VALIDATION_ERROR', `--older-than must be whole seconds, at most ${TEN_YEARS}`, {
          errors,
        });
      }
      // Stuck: the same age as the cambio_payouts_stuck gauge unless told otherwise (decision 0120). Held: every one.
      const listed = await withServices((s) => {
        const fallback = opts.held ? 0 : s.config.stuckPayoutAfterSeconds;
        const seconds = opts.olderThan === undefined ? fallback : Number(opts.olderThan);
        const before = new Date(Date.now() - seconds * 1000);
        return opts.held ? heldWithdrawals(systemEm(s.orm), before) : stuckPayouts(systemEm(s.orm), before);
      });
      const rows = listed.map((op) => {
        const payee = payeeOf(op.intent);
        return {
          id: op.id,
          customerId: op.customerId,
          status: op.status,
          amount: { value: formatAmount(op.targetAmount, op.targetAsset as AssetCode), asset: op.targetAsset },
          since: op.updatedAt.toISOString(),
          // Where the money goes, as the payout will send it: a hold is a review of that too (decision 0310).
          ...(payee ? { payee } : {}),
        };
      });
      const text = rows.map(
        (r) => `${r.id} ${r.status} ${r.amount.value} ${r.amount.asset} since ${r.since}${to(r.payee)}`,
      );
      output(!!opts.json, rows, text.join('\n') || (opts.held ? 'no held withdrawals' : 'no stuck payouts'));
    });

  const withdrawal = program.command('withdrawal').description('withdrawals held for review');
  for (const decision of ['approve', 'reject'] as const) {
    withdrawal
      .command(`${decision} <operationId>`)
      .description(`${decision} a withdrawal that is ON_HOLD`)
      .option('--reason <reason>', 'why')
      .option('--json', 'print JSON')
      .action(async (typed: string, opts: { reason?: string; json?: boolean }) => {
        const id = targetId(typed, 'operation');
        const d = { decision: decision === 'approve' ? 'APPROVE' : 'REJECT', reason: opts.reason } as const;
        print(opts.json)(
          await withTemporalServices(async (s) => decideHold(s, await scopeOf(s, id), id, d, operatorActor())),
        );
      });
  }
}

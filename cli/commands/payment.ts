import type { Command } from 'commander';
import {
  creditPayment,
  type CreditedPayment,
  listPayments,
  returnPayment,
} from '../../services/inbound-payment-resolution';
import {
  getInboundPayment,
  MANUAL_RAILS,
  recordManualPayment,
  type ManualPayment,
} from '../../services/reported-payments';
import { systemEm } from '../../db/orm';
import { INBOUND_PAYMENT_STATUSES, type InboundPayment } from '../../db/entities';
import { presentInboundPayment } from '../../presenters/inbound-payment';
import { presentOperation } from '../../presenters/operation';
import { CambioError } from '../../domain/errors';
import { output, withServices, withTemporalServices } from '../context';
import { auditNote, operatorActor } from '../audit';
import { optionId, targetId } from '../ids';

type Payment = ReturnType<typeof presentInboundPayment>;

const line = (p: Payment) =>
  `${p.id} ${p.status.padEnd(9)} ${p.amount.value} ${p.amount.asset} ${p.rail} customer ${p.customerId}` +
  ` deposit ${p.operationId ?? '-'} e2e ${p.endToEndId}${p.payer ? ` payer ${payerLine(p.payer)}` : ''}`;

/** The sending account as a bank statement writes it: tax id (person type), bank/branch/account-digit. */
const payerLine = (payer: NonNullable<Payment['payer']>) =>
  `${payer.taxId} (${payer.personType}) ${payer.bankCode ?? '?'}/${payer.branchCode ?? '?'}/` +
  `${payer.accountNumber ?? '?'}${payer.accountDigit ? `-${payer.accountDigit}` : ''}`;

/** Decisions 0048, 0076: operators see every payment and resolve the unmatched ones. */
export function paymentCommands(program: Command): void {
  const payment = program.command('payment').description('inbound payments: matched, unmatched, returned, credited');
  payment
    .command('list')
    .description('list inbound payments, newest first')
    .option('--customer <customerId>', 'only this customer')
    .option('--status <status>', `only this status (${INBOUND_PAYMENT_STATUSES.join(', ')})`)
    .option('--json', 'print JSON')
    .action(async (opts: { customer?: string; status?: string; json?: boolean }) => {
      if (opts.status && !(INBOUND_PAYMENT_STATUSES as readonly string[]).includes(opts.status)) {
        const errors = [{ path: '--status', message: 'unknown status' }];
        const message = `--status must be one of ${INBOUND_PAYMENT_STATUSES.join(', ')}`;
        throw new CambioError('VALIDATION_ERROR', message, { errors });
      }
      const customerId = opts.customer === undefined ? undefined : optionId(opts.customer, '--customer');
      const found = await withServices((s) => listPayments(s, { customerId, status: opts.status }));
      const payments = found.map(presentInboundPayment);
      output(!!opts.json, payments, payments.map(line).join('\n') || 'no payments');
    });
  payment
    .command('show <paymentId>')
    .description("one inbound payment, any customer's or the platform's, with its payer when the rail names one")
    .option('--json', 'print JSON')
    .action(async (typed: string, opts: { json?: boolean }) => {
      const id = targetId(typed, 'payment');
      const found = presentInboundPayment(await withServices((s) => getInboundPayment(systemEm(s.orm), id)));
      output(!!opts.json, found, line(found));
    });
  payment
    .command('return <paymentId>')
    .description(
      'send an UNMATCHED payment back through the rail it came in on: PIX through the PSP (RETURNING until it ' +
        'answers; RAIL_NOT_CONFIGURED without PIX_PSP_URL), rails without a connector as done at the bank ' +
        '(RETURNED at once); --outside --reference REF states it was returned at the bank, with its reference',
    )
    .requiredOption('--reason <text>', 'why it goes back')
    .option('--outside', 'the money was returned outside Cambio (at the bank); needs --reference')
    .option('--reference <ref>', "with --outside: the bank's reference of the money that left")
    .option('--json', 'print JSON')
    .action(async (typed: string, opts: { reason: string; outside?: boolean; reference?: string; json?: boolean }) => {
      const id = targetId(typed, 'payment');
      if (!!opts.outside !== (opts.reference !== undefined)) {
        const message = '--outside and --reference go together: the bank reference of a return made outside Cambio';
        const errors = [{ path: opts.outside ? '--reference' : '--outside', message }];
        throw new CambioError('VALIDATION_ERROR', message, { errors });
      }
      const outside = opts.outside ? { reference: opts.reference! } : undefined;
      // Noted inside the return's transaction: the audit row commits with it, never without these details.
      const note = (payment: InboundPayment) => {
        const p = presentInboundPayment(payment);
        auditNote({ details: { returnEndToEndId: p.returned?.endToEndId, amount: p.amount } });
      };
      const returned = presentInboundPayment(
        await withServices((s) => returnPayment(s, id, opts.reason, note, outside)),
      );
      const how =
        returned.status === 'RETURNING'
          ? 'sent to the PSP; RETURNED once it confirms, UNMATCHED again if it refuses'
          : outside
            ? `returned outside Cambio, reference ${returned.returned?.endToEndId}`
            : `end-to-end ${returned.returned?.endToEndId}`;
      output(!!opts.json, returned, `payment ${returned.id} is ${returned.status} (${how})`);
    });
  payment
    .command('record')
    .description(
      `record a payment the bank statement shows on a rail without a connector (${MANUAL_RAILS.join(', ')}), for a ` +
        'deposit (matched as any payment) or a customer (UNMATCHED in its suspense); the same reference again is ' +
        "the same payment, another customer's is refused",
    )
    .requiredOption('--rail <rail>', MANUAL_RAILS.join(', '))
    .option('--operation <operationId>', 'the deposit it paid')
    .option('--customer <customerId>', 'the customer it is for, when it names no deposit')
    .requiredOption('--amount <value>', 'amount received, e.g. 100.00')
    .requiredOption('--asset <asset>', 'asset received, e.g. BRL')
    .requiredOption('--reference <ref>', "the rail's reference (bank statement reference, transaction hash)")
    .option('--json', 'print JSON')
    .action(async (opts: ManualPayment & { operation?: string; customer?: string; json?: boolean }) => {
      const operationId = opts.operation === undefined ? undefined : optionId(opts.operation, '--operation');
      const customerId = opts.customer === undefined ? undefined : optionId(opts.customer, '--customer');
      const input = { ...opts, operationId, customerId };
      auditNote({ target: `${opts.rail}:${opts.reference}` });
      const recorded = presentInboundPayment(
        await withTemporalServices((s) => recordManualPayment(s, input, operatorActor())),
      );
      const { value, asset } = recorded.amount;
      output(!!opts.json, recorded, `payment ${recorded.id} of ${value} ${asset} is ${recorded.status}`);
    });
  payment
    .command('credit <paymentId>')
    .description("credit an UNMATCHED payment to one of its customer's accounts (a DEPOSIT, COMPLETED at once)")
    .requiredOption('--account <accountId>', 'the account credited')
    .option('--json', 'print JSON')
    .action(async (typed: string, opts: { account: string; json?: boolean }) => {
      const id = targetId(typed, 'payment');
      const accountId = optionId(opts.account, '--account');
      // Noted inside the credit's transaction: the audit row commits with it, never without these details.
      const note = (c: CreditedPayment) =>
        auditNote({ details: { operationId: c.operation.id, amount: presentInboundPayment(c.payment).amount } });
      const record = await withServices((s) => creditPayment(s, id, accountId, note));
      const credited = {
        payment: presentInboundPayment(record.payment),
        operation: presentOperation(record.operation),
      };
      output(!!opts.json, credited, `payment ${credited.payment.id} is CREDITED by deposit ${credited.operation.id}`);
    });
}

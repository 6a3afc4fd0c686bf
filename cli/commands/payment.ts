import type { Command } from 'commander';
import { creditPayment, listPayments, returnPayment } from '../../api/services/inbound-payment-resolution';
import { INBOUND_PAYMENT_STATUSES } from '../../db/entities';
import { CambioError } from '../../domain/errors';
import { output, withServices } from '../context';
import { auditNote } from '../audit';

type Payment = Awaited<ReturnType<typeof listPayments>>[number];

const line = (p: Payment) =>
  `${p.id} ${p.status.padEnd(9)} ${p.amount.value} ${p.amount.asset} ${p.rail} customer ${p.customerId}` +
  ` deposit ${p.operationId ?? '-'} e2e ${p.endToEndId}`;

/** docs/decisions.md, "Inbound payments": operators see every payment and resolve the unmatched ones. */
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
      const payments = await withServices((s) => listPayments(s, { customerId: opts.customer, status: opts.status }));
      output(!!opts.json, payments, payments.map(line).join('\n') || 'no payments');
    });
  payment
    .command('return <paymentId>')
    .description('send an UNMATCHED payment back through its rail (RETURNED, a DEBIT with a new end-to-end id)')
    .requiredOption('--reason <text>', 'why it goes back')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { reason: string; json?: boolean }) => {
      const returned = await withServices((s) => returnPayment(s, id, opts.reason));
      auditNote({ details: { returnEndToEndId: returned.returned?.endToEndId, amount: returned.amount } });
      output(!!opts.json, returned, `payment ${returned.id} is RETURNED (end-to-end ${returned.returned?.endToEndId})`);
    });
  payment
    .command('credit <paymentId>')
    .description("credit an UNMATCHED payment to one of its customer's accounts (a DEPOSIT, COMPLETED at once)")
    .requiredOption('--account <accountId>', 'the account credited')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { account: string; json?: boolean }) => {
      const credited = await withServices((s) => creditPayment(s, id, opts.account));
      auditNote({ details: { operationId: credited.operation.id, amount: credited.payment.amount } });
      output(!!opts.json, credited, `payment ${credited.payment.id} is CREDITED by deposit ${credited.operation.id}`);
    });
}

import { systemEm, tenantEm, type Em } from '../db/orm';
import { CustomerSchema, OperationSchema, type InboundPayment, type Operation } from '../db/entities';
import { chargeField, manualRails, railAccepts, railEntry, railReference } from '../rails/registry';
import { isAssetCode } from '../domain/assets';
import { findPayment, INBOUND_PAYMENT_LIST } from '../db/repositories/inbound-payments';
import type { AssetCode } from '../domain/assets';
import { CambioError } from '../domain/errors';
import { parseAmountValue } from '../domain/money';
import { END_TO_END_ID_PATTERN } from '../domain/end-to-end-ids';
import {
  decideInboundPayment,
  recordInboundPayment as record,
  type PaymentDecisionRoute,
} from '../payments/record-and-decide';
import { crashPoint } from './crash-point';
import { requireTransferOnChain } from './recorded-transfer-on-chain';
import { notFound } from '../domain/errors';
import { ListQuery, Page, runList } from '../lists/run-list';
import type { ServiceContext } from './context';

export interface InboundPaymentReport {
  amount: { value: string; asset: AssetCode };
  endToEndId?: string;
}

/**
 * Step 1 of a payment reported for a deposit (payments/record-and-decide.ts). Keyed by the rail reference: a report
 * of an `endToEndId` already recorded returns that record. Without one, `defaultEndToEndId` names it (the sandbox
 * route derives it from the idempotency key, so a retried request finds its first attempt's record); with neither,
 * it is refused: a reference made up here would make a rerun record the money twice. `via`: the decision row and
 * signal committed with the record (every reporter passes it; without, only the sweep has the record decided).
 */
export async function recordInboundPayment(
  em: Em,
  operationId: string,
  body: InboundPaymentReport,
  opts: { defaultEndToEndId?: string; via?: PaymentDecisionRoute } = {},
): Promise<InboundPayment> {
  const { asset } = body.amount;
  if (!isAssetCode(asset)) {
    const errors = [{ path: '/amount/asset', message: 'is not an asset Cambio knows' }];
    throw new CambioError('VALIDATION_ERROR', `/amount/asset "${asset}" is not an asset Cambio knows`, { errors });
  }
  const amount = parseAmountValue(body.amount.value, asset, { path: '/amount/value' });
  const endToEndId = body.endToEndId ?? opts.defaultEndToEndId;
  if (!endToEndId) {
    const errors = [{ path: '/endToEndId', message: 'the rail reference of the payment is required' }];
    throw new CambioError('VALIDATION_ERROR', 'the rail reference (endToEndId) is required', { errors });
  }
  // As the sandbox route's schema reads it: `deposit pay` takes it as typed, and "E2E1 " would be a second payment.
  if (!new RegExp(END_TO_END_ID_PATTERN).test(endToEndId)) {
    const message = 'must be 1 to 64 letters, digits, _ or -';
    throw new CambioError('VALIDATION_ERROR', `/endToEndId ${message}`, { errors: [{ path: '/endToEndId', message }] });
  }
  return record(em, { operationId, endToEndId, amount, asset, claimed: true }, opts.via);
}

/** Both steps, then the record as decided: the operator CLI's `deposit pay` (`actor`: `operator:<name>`). */
export async function reportInboundPayment(
  s: ServiceContext,
  em: Em,
  operationId: string,
  body: InboundPaymentReport,
  actor: string,
) {
  await refuseProviderRail(s, em, operationId);
  const via = { taskQueue: s.config.taskQueue, actor };
  const payment = await recordInboundPayment(em, operationId, body, { via });
  // The crash tests kill the process here: recorded with its decision's signal queued, not sent (the relay sends it).
  crashPoint('after-payment-record');
  await decideInboundPayment(s, payment, undefined, actor);
  return getInboundPayment(em, payment.id);
}

/**
 * `deposit pay` records what a person reports, which is money only where no provider reports it (decisions.md, "A
 * claim is not money": only the provider's own record moves money). A deposit charged at its rail's provider (PIX's
 * `txid` at the PSP, BOLETO's `seuNumero` at the bank) is paid by what that provider records under its own reference
 * (its notice, read back, or reconciliation), whatever this process's configuration; a CRYPTO deposit, on a process
 * with the chain's node, by the transfer the scanner records under `{chainId}:{txHash}:{logIndex}`, which
 * `deposit pay`'s pattern cannot carry. Reported under another reference it would be the same money twice once the
 * provider's record arrives (a second record, UNMATCHED and creditable), and at another amount money nobody paid.
 * TED's operators may always record (0303). Decisions 0336 (CRYPTO) and 0340.
 */
async function refuseProviderRail(s: ServiceContext, em: Em, operationId: string): Promise<void> {
  const op = await em.fork({ keepTransactionContext: true }).findOne(OperationSchema, { id: operationId });
  if (!op) return;
  const rail = depositRail(op);
  const entry = rail ? railEntry(rail) : undefined;
  if (entry?.recordedBy === 'operator' && !entry.operatorMayRecord && entry.hasProvider(s.config)) {
    const message =
      `a ${rail} deposit is paid by a transfer the chain scanner records itself; to record one before it does, run ` +
      `\`cambio payment record --rail ${rail} --operation ${operationId} --reference {chainId}:{txHash}:{logIndex}\` ` +
      '(read on the chain first): nothing was recorded';
    const errors = [{ path: '--end-to-end', message: `a ${rail} transfer is recorded with \`cambio payment record\`` }];
    throw new CambioError('VALIDATION_ERROR', message, { errors });
  }
  refuseChargedDeposit(op, '--end-to-end');
}

/**
 * A deposit charged at its rail's provider (its funding instruction carries the charge: PIX's `txid`, BOLETO's
 * `seuNumero`) is paid by what that provider records, whatever this process's configuration: `deposit pay` and
 * `payment record --operation` refuse it (`path`: the option named). Decision 0340.
 */
function refuseChargedDeposit(op: Operation, path: string): void {
  const rail = depositRail(op);
  const entry = rail ? railEntry(rail) : undefined;
  if (!rail || !entry || entry.operatorMayRecord || entry.recordedBy !== 'connector') return;
  const instruction = op.intent.fundingInstruction as Record<string, unknown> | undefined;
  if (instruction?.[chargeField(rail)] === undefined) return;
  const message =
    `a ${rail} deposit charged at its provider is paid by what that provider records (its notice, read back, ` +
    'or the reconciliation): nothing was recorded';
  throw new CambioError('VALIDATION_ERROR', message, {
    errors: [{ path, message: `a ${rail} payment is recorded from its provider` }],
  });
}

/** The rail a deposit's funding instruction names; undefined for another kind of operation. */
const depositRail = (op: Operation): string | undefined =>
  (op.intent.fundingInstruction as { rail?: string } | undefined)?.rail;

/** One record of the EntityManager's customer; another customer's is 404. */
export async function getInboundPayment(em: Em, id: string): Promise<InboundPayment> {
  const payment = await findPayment(em.fork({ keepTransactionContext: true }), id);
  if (!payment) throw notFound('inbound payment');
  return payment;
}

export async function listInboundPayments(
  em: Em,
  query: ListQuery,
  cursorSecret: string,
): Promise<Page<InboundPayment>> {
  return runList(em, INBOUND_PAYMENT_LIST, query, cursorSecret);
}

/**
 * The rails an operator may record from the bank statement on some deployment (`recordManualPayment` checks this
 * one's).
 */
export const MANUAL_RAILS: readonly string[] = manualRails();

export interface ManualPayment {
  rail: string;
  /** The deposit it paid; or, without one, the customer it is for (UNMATCHED in that customer's suspense). */
  operationId?: string;
  customerId?: string;
  amount: string;
  asset: string;
  /** The rail's reference (bank statement reference, transaction hash): one payment per rail and reference. */
  reference: string;
}

/**
 * `cambio payment record`: what the bank statement of a rail without a connector shows, recorded and decided as
 * any reported payment (same matching, same uniqueness per rail reference: another customer's reference is 409
 * RAIL_REFERENCE_IN_USE, the same customer's is the same payment). The record as decided; `actor`: `operator:<name>`.
 */
export async function recordManualPayment(s: ServiceContext, input: ManualPayment, actor: string) {
  const invalid = (path: string, message: string) =>
    new CambioError('VALIDATION_ERROR', `${path} ${message}`, { errors: [{ path, message }] });
  const manual = manualRails(s.config);
  if (!manual.includes(input.rail)) {
    throw invalid('--rail', `must be one of ${manual.join(', ')} (a rail with a provider here records its own)`);
  }
  if (!input.operationId === !input.customerId) throw invalid('--operation', 'or --customer, exactly one of them');
  if (!isAssetCode(input.asset)) throw invalid('--asset', 'is not an asset Cambio knows');
  if (!railAccepts(input.rail, input.asset)) {
    const message = `${input.rail} does not pay in ${input.asset}`;
    throw new CambioError('RAIL_ASSET_MISMATCH', message, { rail: input.rail, asset: input.asset });
  }
  if (!input.reference.trim()) throw invalid('--reference', 'is required');
  const amount = parseAmountValue(input.amount, input.asset, { path: '--amount' });
  const endToEndId = railReference(input.rail, input.reference.trim());
  const report = { endToEndId, amount, asset: input.asset, rail: input.rail };
  let em: Em;
  let customerId: string;
  if (input.operationId) {
    const op = await systemEm(s.orm).findOne(OperationSchema, { id: input.operationId });
    if (!op) throw notFound('operation');
    const rail = depositRail(op);
    if (op.type === 'DEPOSIT' && rail !== input.rail) throw invalid('--rail', `is not the deposit's rail (${rail})`);
    // A CLI run without the bank's settings lists BOLETO as manual; a boleto the bank registered is still the bank's.
    refuseChargedDeposit(op, '--operation');
    em = tenantEm(s.orm, op.customerId);
    customerId = op.customerId;
  } else {
    const customer = await systemEm(s.orm).findOne(CustomerSchema, { id: input.customerId! });
    if (!customer) throw notFound('customer');
    em = tenantEm(s.orm, customer.id);
    customerId = customer.id;
  }
  // A transfer the chain shows to another customer's deposit address is theirs (decision 0293), and it is what the
  // chain shows it is (0335).
  await requireTransferOnChain(s, input.rail, endToEndId, customerId, { asset: input.asset, amount: amount.toFixed() });
  // With its decision row in the record's COMMIT, as every reporter: a CLI that dies before deciding leaves the
  // signal to the relay, not to the sweep.
  const payment = await record(
    em,
    input.operationId ? { ...report, operationId: input.operationId } : { ...report, customerId: input.customerId! },
    { taskQueue: s.config.taskQueue, actor },
  );
  await decideInboundPayment(s, payment, undefined, actor);
  return getInboundPayment(em, payment.id);
}

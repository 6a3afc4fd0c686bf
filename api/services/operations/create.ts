import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { Em } from '../../../db/orm';
import { Account, AccountSchema, Operation, OperationSchema, OperationType, Quote, QuoteSchema } from '../../../db/entities';
import { recordEvent } from '../../../db/repositories/events';
import { startDeliveries } from '../../../events/deliveries';
import { post } from '../../../db/repositories/ledger';
import { CambioError } from '../../../domain/errors';
import { initialStates } from '../../../domain/states';
import { operationWorkflowId } from '../../../workflows/ids';
import { notFound } from '../../errors';
import { operationEventPayload } from '../../../events/operation';
import { presentOperation } from '../../presenters/operation';
import { quoteReference } from '../../presenters/quote';
import { amount } from '../../presenters/amount';
import type { ServiceContext } from '../context';
import { enqueueWorkflowStart, startAfterCommit, WorkflowStartRequest } from '../workflow-starts';
import { holdPostings } from '../../../domain/postings';
import { afterCommit, inTransaction } from '../../../db/transaction';

export interface OperationPlan {
  intent: Record<string, unknown>;
  targetAccountId?: string;
  /** Input the workflow needs besides the operation id (decided now, so a config change mid-flight does not alter it). */
  workflowInput?: Record<string, unknown>;
}

export interface OperationRequest {
  type: OperationType;
  accountId: string;
  /** A quote the caller holds; absent only for a transfer, which then gets a generated 1:1 quote. */
  quoteId?: string;
  /** Builds the quote for a transfer without one, inside the transaction. */
  generateQuote?: (em: Em, account: Account, now: Date) => Quote;
  /** Type-specific checks and intent, run with the account and the locked quote. */
  plan: (em: Em, account: Account, quote: Quote, operationId: string) => Promise<OperationPlan>;
}

// Swaps, withdrawals and transfers reserve the source amount at creation; a deposit brings money in.
const HOLDS: Record<OperationType, boolean> = { DEPOSIT: false, WITHDRAWAL: true, SWAP: true, TRANSFER: true };
// docs/decisions.md: a transfer emits COMPLETED and FAILED only.
const REQUESTED_EVENT: Record<OperationType, boolean> = { DEPOSIT: true, WITHDRAWAL: true, SWAP: true, TRANSFER: false };

/**
 * Creates any operation in one transaction: consume the quote (row lock, so racers queue and then see it
 * consumed), check the account, reserve funds, insert the operation, its OPERATION_REQUESTED event and the
 * outbox row for its workflow. After the outermost COMMIT the workflow is started in the background; a crash
 * before that is the relay's.
 */
export async function createOperation(s: ServiceContext, em: Em, req: OperationRequest) {
  const id = randomUUID();
  const now = new Date();
  const { operation, start, deliveries } = await inTransaction(em, async (tx) => {
    const account = await tx.findOne(AccountSchema, { id: req.accountId });
    if (!account) throw notFound('account');
    const quote = req.quoteId ? await lockQuote(tx, req.quoteId, account.id, now) : req.generateQuote!(tx, account, now);
    if (account.status !== 'ACTIVE') throw new CambioError('ACCOUNT_NOT_ACTIVE', 'the account is not ACTIVE', { accountId: account.id, status: account.status });
    const plan = await req.plan(tx, account, quote, id);
    quote.consumedAt = now;
    quote.consumedBy = id;
    const operation = tx.create(OperationSchema, {
      id,
      customerId: account.customerId,
      accountId: account.id,
      type: req.type,
      status: 'REQUESTED',
      states: initialStates('REQUESTED', now),
      intent: plan.intent,
      quoteId: quote.id,
      quoteRef: quoteReference(quote),
      accountOwner: account.legalName,
      sourceAsset: quote.sourceAsset,
      sourceAmount: quote.sourceAmount,
      targetAsset: quote.targetAsset,
      targetAmount: quote.targetAmount,
      targetAccountId: plan.targetAccountId ?? null,
      fees: req.type === 'TRANSFER' ? [] : spreadFee(quote, now),
      transactions: [],
      tags: account.tags.filter((t) => t.propagate).map(({ key, value }) => ({ key, value })),
      createdAt: now,
      updatedAt: now,
    });
    // Flush first: the ledger rows reference the operation and the quote's unique consumer.
    await tx.flush();
    if (HOLDS[req.type]) {
      await post(tx, { key: `${id}:hold`, operationId: id, customerId: account.customerId, description: `${req.type} hold`, postings: holdPostings(operation) });
    }
    const deliveries = REQUESTED_EVENT[req.type]
      ? await recordEvent(tx, {
          customerId: account.customerId,
          type: 'OPERATION_REQUESTED',
          resourceType: 'OPERATION',
          resourceId: id,
          dedupeKey: `${id}:REQUESTED`,
          atTime: now,
          payload: operationEventPayload(operation, now),
        })
      : [];
    const start: WorkflowStartRequest = {
      workflowId: operationWorkflowId(id),
      workflowType: 'operationWorkflow',
      args: [{ operationId: id, type: req.type, ...(plan.workflowInput ?? {}) }],
      searchAttributes: { CustomerId: account.customerId, OperationType: req.type, OperationStatus: 'REQUESTED' },
    };
    enqueueWorkflowStart(tx, start);
    return { operation, start, deliveries };
  });
  // After the OUTERMOST commit (a request's transaction commits later than this one): a workflow started earlier
  // could act on rows that then roll back. The outbox row already guarantees the start, so the client is not kept
  // waiting for Temporal: the start runs after the response, and whatever it does not finish (a crash, Temporal
  // down) the relay does.
  await afterCommit(() => {
    void startAfterCommit(s.orm, s.temporal, s.config.taskQueue, start).then((started) => {
      if (!started) s.log.warn({ workflowId: start.workflowId }, 'workflow start failed after commit; the outbox relay will start it');
    });
    void startDeliveries(s, deliveries);
  });
  return presentOperation(operation);
}

/** The spread the quote priced in, disclosed as the FX_SPREAD fee in the source asset. */
function spreadFee(quote: Quote, now: Date): Operation['fees'] {
  if (!quote.feeAmount || quote.feeAmount.isZero()) return [];
  return [{ amount: amount(quote.feeAmount, quote.sourceAsset), source: 'FX_SPREAD', type: 'PERCENTAGE', percentage: quote.spread, createdAt: now.toISOString() }];
}

/** The quote rules shared by every operation kind (spec: same customer, same account, unexpired, unconsumed). */
async function lockQuote(em: Em, quoteId: string, accountId: string, now: Date): Promise<Quote> {
  const quote = await em.findOne(QuoteSchema, { id: quoteId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!quote) throw new CambioError('QUOTE_NOT_FOUND', 'quote not found', { quoteId });
  if (quote.accountId !== accountId) throw new CambioError('QUOTE_ACCOUNT_MISMATCH', 'the quote is bound to another account', { quoteId, accountId });
  if (quote.consumedBy) throw new CambioError('QUOTE_ALREADY_CONSUMED', 'the quote was already used by another operation', { quoteId });
  if (quote.expiresAt.getTime() <= now.getTime()) throw new CambioError('QUOTE_EXPIRED', 'the quote has expired', { quoteId, expiresAt: quote.expiresAt.toISOString() });
  return quote;
}

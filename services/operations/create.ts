import { randomUUID } from 'node:crypto';
import type { Em } from '../../db/orm';
import { SqlBatch } from '../../db/batch';
import type { Account, Operation, OperationType, Quote } from '../../db/entities';
import { addEvent } from '../../db/repositories/events';
import { addPosting } from '../../db/repositories/ledger';
import { addOperation, readCreateInputs } from '../../db/repositories/operations';
import { addQuote, addQuoteConsumed } from '../../db/repositories/quotes';
import { CambioError } from '../../domain/errors';
import { initialStates } from '../../domain/states';
import { operationWorkflowId } from '../../workflows/ids';
import { notFound } from '../../domain/errors';
import { operationEventPayload } from '../../webhooks/operation-event';
import { quoteReference } from '../quote-reference';
import { amount } from '../../domain/amount';
import type { ServiceContext } from '../context';
import { addWorkflowStart } from '../../db/repositories/outbox';
import { holdPostings } from '../../domain/postings';
import { operationSummary } from '../../domain/summaries';
import { inTransaction } from '../../db/transaction';
import { admitOperation } from './admission';

export interface OperationPlan {
  intent: Record<string, unknown>;
  targetAccountId?: string;
  /**
   * Input the workflow needs besides the operation id (decided now, so a config change mid-flight does not alter it).
   */
  workflowInput?: Record<string, unknown>;
}

export interface OperationRequest {
  type: OperationType;
  accountId: string;
  /**
   * A second account of the caller's the operation needs (a transfer's target): read with the first, handed to `plan`.
   */
  otherAccountId?: string;
  /** A quote the caller holds; absent only for a transfer, which then gets a generated 1:1 quote. */
  quoteId?: string;
  /** Builds the quote for a transfer without one; it is inserted with the operation. */
  generateQuote?: (account: Account, now: Date) => Quote;
  /**
   * Type-specific checks and intent, run with the account, the locked quote and the other account (undefined: not the
   * caller's).
   */
  plan: (em: Em, account: Account, quote: Quote, operationId: string, other?: Account) => Promise<OperationPlan>;
  /**
   * An operation with nothing to wait for (an operator crediting a payment from suspense): its completion joins
   * the creation's batch, after the operation and its REQUESTED event, and no workflow is started.
   */
  completeAtOnce?: (batch: SqlBatch, operation: Operation) => void;
}

// Swaps, withdrawals and transfers reserve the source amount at creation; a deposit brings money in.
const HOLDS: Record<OperationType, boolean> = { DEPOSIT: false, WITHDRAWAL: true, SWAP: true, TRANSFER: true };
// Decision 0006: a transfer emits COMPLETED and FAILED only.
const REQUESTED_EVENT: Record<OperationType, boolean> = {
  DEPOSIT: true,
  WITHDRAWAL: true,
  SWAP: true,
  TRANSFER: false,
};

/**
 * Creates any operation in one transaction: consume the quote (row lock, so racers queue and then see it
 * consumed), check the account, reserve funds, insert the operation, its OPERATION_REQUESTED event and the
 * outbox row for its workflow. The outermost COMMIT (with the request's stored answer) wakes
 * the worker's relay, which starts the workflow: the request never waits for Temporal, and a crash after COMMIT
 * leaves nothing undone.
 *
 * Two round trips, in the caller's tenant scope (the repositories take it from the EntityManager): the reads
 * (the customer's backlog for admission, the accounts, the quote locked), then every write as one batch
 * (db/batch.ts) in this order: the quote, the operation, the hold (ledger `addPosting`, its lock order), the event
 * with its deliveries, the outbox row.
 * In a request this runs in the request's transaction without a savepoint of its own (the keyed transaction already
 * rolls a failure back to its savepoint); called on its own it opens its transaction.
 */
export async function createOperation(s: ServiceContext, em: Em, req: OperationRequest) {
  const id = randomUUID();
  return inTransaction(
    em,
    async (tx) => {
      // An operator's credit completes at once and waits for nothing: only what the engine must run is admitted.
      const admitted = !req.completeAtOnce;
      const inputs = await readCreateInputs(
        tx,
        req.otherAccountId ? [req.accountId, req.otherAccountId] : [req.accountId],
        req.quoteId,
        { backlogUpTo: admitted ? s.config.maxPendingOperationsPerCustomer : undefined },
      );
      // The clock is read once the quote's row is ours: the read may have waited on it (a racing operation holding
      // it), and a quote that expired meanwhile must not be consumed at an instant read before that wait.
      const now = new Date();
      if (inputs.backlog) admitOperation(s, tx, inputs.backlog);
      const account = inputs.accounts.find((a) => a.id === req.accountId);
      const other = inputs.accounts.find((a) => a.id === req.otherAccountId);
      const locked = inputs.quote;
      if (!account) throw notFound('account');
      const quote = req.quoteId ? checkQuote(locked, req.quoteId, account.id, now) : req.generateQuote!(account, now);
      if (account.status !== 'ACTIVE')
        throw new CambioError('ACCOUNT_NOT_ACTIVE', 'the account is not ACTIVE', {
          accountId: account.id,
          status: account.status,
        });
      const plan = await req.plan(tx, account, quote, id, other);
      quote.consumedAt = now;
      quote.consumedBy = id;
      const operation: Operation = {
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
      };
      const batch = new SqlBatch();
      if (req.quoteId) addQuoteConsumed(batch, quote);
      else addQuote(batch, quote);
      addOperation(batch, operation);
      if (HOLDS[req.type]) {
        addPosting(batch, {
          key: `${id}:hold`,
          operationId: id,
          customerId: account.customerId,
          description: `${req.type} hold`,
          postings: holdPostings(operation),
        });
      }
      if (REQUESTED_EVENT[req.type]) {
        addEvent(batch, s.config, {
          customerId: account.customerId,
          type: 'OPERATION_REQUESTED',
          resourceType: 'OPERATION',
          resourceId: id,
          dedupeKey: `${id}:REQUESTED`,
          atTime: now,
          payload: operationEventPayload(operation, now),
        });
      }
      if (req.completeAtOnce) req.completeAtOnce(batch, operation);
      else
        addWorkflowStart(batch, s.config.taskQueue, {
          workflowId: operationWorkflowId(id),
          workflowType: 'operationWorkflow',
          args: [{ operationId: id, type: req.type, ...(plan.workflowInput ?? {}) }],
          searchAttributes: { CustomerId: account.customerId, OperationType: req.type, OperationStatus: 'REQUESTED' },
          summary: operationSummary(operation),
        });
      await batch.run(tx);
      return operation;
    },
    { savepoint: false },
  );
}

/** The spread the quote priced in, disclosed as the FX_SPREAD fee in the source asset. */
function spreadFee(quote: Quote, now: Date): Operation['fees'] {
  if (!quote.feeAmount || quote.feeAmount.isZero()) return [];
  return [
    {
      amount: amount(quote.feeAmount, quote.sourceAsset),
      source: 'FX_SPREAD',
      type: 'PERCENTAGE',
      percentage: quote.spread,
      createdAt: now.toISOString(),
    },
  ];
}

/** The quote rules shared by every operation kind (spec: same customer, same account, unexpired, unconsumed). */
function checkQuote(quote: Quote | undefined, quoteId: string, accountId: string, now: Date): Quote {
  if (!quote) throw new CambioError('QUOTE_NOT_FOUND', 'quote not found', { quoteId });
  if (quote.accountId !== accountId)
    throw new CambioError('QUOTE_ACCOUNT_MISMATCH', 'the quote is bound to another account', { quoteId, accountId });
  if (quote.consumedBy)
    throw new CambioError('QUOTE_ALREADY_CONSUMED', 'the quote was already used by another operation', { quoteId });
  if (quote.expiresAt.getTime() <= now.getTime())
    throw new CambioError('QUOTE_EXPIRED', 'the quote has expired', {
      quoteId,
      expiresAt: quote.expiresAt.toISOString(),
    });
  return quote;
}

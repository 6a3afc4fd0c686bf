import type { Operation } from '../db/entities';
import { currentState } from '../domain/states';
import { amount } from '../domain/amount';
import { WALLET } from '../domain/dict-key';

/**
 * The spec's operation event payload, shared by OPERATION_REQUESTED / COMPLETED / FAILED. `atTime` is the
 * moment of the transition. `quote` is null for same-asset operations.
 */
export function operationEventPayload(op: Operation, atTime: Date) {
  return {
    id: op.id,
    customerId: op.customerId,
    account: { id: op.accountId, owner: op.accountOwner },
    sourceAmount: amount(op.sourceAmount, op.sourceAsset),
    destinationAmount: amount(op.targetAmount, op.targetAsset),
    intent: eventIntent(op),
    fees: op.fees.map((f) => ({
      type: f.type,
      amount: f.amount,
      source: f.source,
      ...(f.percentage ? { percentage: f.percentage } : {}),
    })),
    transactions: op.transactions.map((t) => ({
      type: t.type,
      direction: t.direction,
      amount: t.amount,
      currentState: { status: t.status, createdAt: t.createdAt, ...(t.reason ? { reason: t.reason } : {}) },
      endToEnd: t.endToEnd,
    })),
    currentState: currentState(op.states),
    atTime: atTime.toISOString(),
    quote:
      op.sourceAsset === op.targetAsset
        ? null
        : { id: op.quoteRef.id, effectiveRate: op.quoteRef.effectiveRate, expiresAt: op.quoteRef.expiresAt },
    tags: op.tags,
  };
}

/** WITHDRAWAL events flatten the beneficiary as the spec shows; other intents pass through. */
function eventIntent(op: Operation) {
  if (op.type !== 'WITHDRAWAL') return op.intent;
  const b = op.intent.beneficiary as {
    id: string;
    holder: {
      type: string;
      firstName?: string;
      lastName?: string;
      legalName?: string;
      taxId: { value: string };
      address: unknown;
    };
    paymentInstruction: { id: string; rail: string; keyType: string; key: string; network?: string };
  };
  const name = b.holder.type === 'COMPANY' ? b.holder.legalName : `${b.holder.firstName} ${b.holder.lastName}`;
  return {
    type: 'WITHDRAWAL',
    beneficiary: {
      id: b.id,
      holder: { name, taxId: b.holder.taxId.value, address: b.holder.address },
      instruction: { id: b.paymentInstruction.id, address: instructionAddress(b.paymentInstruction) },
    },
  };
}

/**
 * Where the withdrawal pays, as the instruction's own events show it (webhooks/beneficiary-event.ts): a DICT key
 * (PIX), or a WALLET on a chain (decision 0134, "the webhook payload likewise"; it was shown as a PIX key of type
 * WALLET). A withdrawal recorded before its intent named the chain shows no `network`.
 */
function instructionAddress(pi: { rail: string; keyType: string; key: string; network?: string }) {
  if (pi.keyType === WALLET) {
    return { type: WALLET, rail: pi.rail, ...(pi.network ? { network: pi.network } : {}), address: pi.key };
  }
  return { type: 'PIX', rail: pi.rail, keyType: pi.keyType, key: pi.key };
}

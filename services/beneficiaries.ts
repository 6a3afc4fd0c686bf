import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { Config } from '../config';
import type { Em } from '../db/orm';
import { Beneficiary, BeneficiarySchema, PaymentInstruction, PaymentInstructionSchema } from '../db/entities';
import { BENEFICIARY_LIST, instructionCounts, newBeneficiary } from '../db/repositories/beneficiaries';
import { recordEvent } from '../db/repositories/events';
import { DictKeyType, isValidDictKey } from '../domain/dict-key';
import { initialStates } from '../domain/states';
import { isValidTaxId, normalizeTaxId } from '../domain/tax-id';
import { CambioError, notFound, validationError } from '../domain/errors';
import { ListQuery, Page, runList } from '../lists/run-list';
import type { Holder } from '../domain/holder';
import { instructionEventPayload } from '../webhooks/beneficiary-event';
import { instructionReviewWorkflowId } from '../workflows/ids';
import type { ServiceContext } from './context';
import { recordWorkflowStart, WorkflowStartRequest } from '../db/repositories/outbox';
import { inTransaction } from '../db/transaction';
import { PIX_ASSET, PIX_RAIL } from '../rails/pix/connector';

export interface PixInstructionInput {
  type: 'PIX';
  asset: string;
  dictKeyType: DictKeyType;
  dictKey: string;
}

export interface CreateBeneficiary {
  holder: Holder;
  relationshipType: Beneficiary['relationshipType'];
  paymentInstruction: PixInstructionInput;
}

// PIX settles in reais only (../shared/spec/decisions.md, "Onboarding").

/** Creates a beneficiary with its first instruction (PENDING_REVIEW) and starts that instruction's review. */
export async function createBeneficiary(s: ServiceContext, em: Em, input: CreateBeneficiary) {
  const holder = checkHolder(input.holder);
  checkInstruction(input.paymentInstruction, '/paymentInstruction');
  const now = new Date();
  const beneficiaryId = randomUUID();
  await inTransaction(em, async (tx) => {
    const b = newBeneficiary(tx, {
      id: beneficiaryId,
      holder: holder as unknown as Record<string, unknown>,
      relationshipType: input.relationshipType,
      createdAt: now,
      updatedAt: now,
    });
    await newInstruction(tx, s.config, b, input.paymentInstruction, now);
  });
  return getBeneficiary(em, beneficiaryId);
}

/** Adds a PIX instruction (PENDING_REVIEW) to a beneficiary of the caller; returns the full beneficiary. */
export async function addPaymentInstruction(
  s: ServiceContext,
  em: Em,
  beneficiaryId: string,
  input: PixInstructionInput,
) {
  checkInstruction(input, '');
  const now = new Date();
  await inTransaction(em, async (tx) => {
    // The lock serialises concurrent additions, so the duplicate check below cannot race.
    const b = await tx.findOne(BeneficiarySchema, { id: beneficiaryId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!b) throw notFound('beneficiary');
    // The same key twice would be two reviews of one payee; once rejected, it may be submitted again.
    const same = await tx.findOne(PaymentInstructionSchema, {
      beneficiaryId,
      dictKeyType: input.dictKeyType,
      dictKey: input.dictKey,
      status: { $ne: 'REJECTED' },
    });
    if (same) {
      throw new CambioError(
        'INVALID_STATE',
        `this beneficiary already has a ${same.status} instruction for that DICT key`,
        {
          instructionId: same.id,
          status: same.status,
        },
      );
    }
    b.updatedAt = now;
    await newInstruction(tx, s.config, b, input, now);
  });
  return getBeneficiary(em, beneficiaryId);
}

/** A beneficiary with its payment instructions in creation order (the first is the one it was created with). */
export interface BeneficiaryRecord {
  beneficiary: Beneficiary;
  instructions: PaymentInstruction[];
}

/** A list entry: the beneficiary and how many payment instructions it has. */
export interface BeneficiarySummaryRecord {
  beneficiary: Beneficiary;
  instructionCount: number;
}

/** The full beneficiary, re-read from the database (`refresh`: a review may have changed it meanwhile). */
export async function getBeneficiary(em: Em, beneficiaryId: string): Promise<BeneficiaryRecord> {
  const b = await em.findOne(BeneficiarySchema, { id: beneficiaryId }, { refresh: true });
  if (!b) throw notFound('beneficiary');
  const instructions = await em.find(
    PaymentInstructionSchema,
    { beneficiaryId },
    { orderBy: { createdAt: 'asc', id: 'asc' }, refresh: true },
  );
  return { beneficiary: b, instructions };
}

export async function listBeneficiaries(
  em: Em,
  query: ListQuery,
  cursorSecret: string,
): Promise<Page<BeneficiarySummaryRecord>> {
  const page: Page<Beneficiary> = await runList(em, BENEFICIARY_LIST, query, cursorSecret);
  const counts = await instructionCounts(
    em,
    page.data.map((b) => b.id),
  );
  return {
    data: page.data.map((b) => ({ beneficiary: b, instructionCount: counts.get(b.id) ?? 0 })),
    meta: page.meta,
  };
}

/**
 * Inserts the instruction, its CREATED event (with its webhook deliveries) and its review workflow's outbox
 * row in the caller's transaction; the workers of their task queues start the workflows once it commits.
 */
async function newInstruction(
  tx: Em,
  queues: Pick<Config, 'taskQueue' | 'webhookTaskQueue'>,
  b: Beneficiary,
  input: PixInstructionInput,
  now: Date,
): Promise<void> {
  const pi: PaymentInstruction = tx.create(PaymentInstructionSchema, {
    id: randomUUID(),
    beneficiaryId: b.id,
    customerId: b.customerId,
    asset: input.asset,
    rail: PIX_RAIL,
    dictKeyType: input.dictKeyType,
    dictKey: input.dictKey,
    status: 'PENDING_REVIEW',
    states: initialStates('PENDING_REVIEW', now),
    createdAt: now,
    updatedAt: now,
  });
  await recordEvent(tx, queues, {
    customerId: b.customerId,
    type: 'BENEFICIARY_PAYMENT_INSTRUCTION_CREATED',
    resourceType: 'BENEFICIARY',
    resourceId: pi.id,
    payload: instructionEventPayload(b, pi, now),
    dedupeKey: `${pi.id}:CREATED`,
    atTime: now,
  });
  const summary = `INSTRUCTION REVIEW PIX ${pi.dictKeyType} ${pi.dictKey} (${pi.asset})`;
  await recordWorkflowStart(tx, queues.taskQueue, { ...instructionReviewStart(pi.id, b.customerId), summary });
}

/** The review workflow of one instruction: one id per instruction, so a retried start finds the same run. */
export function instructionReviewStart(instructionId: string, customerId: string): WorkflowStartRequest {
  return {
    workflowId: instructionReviewWorkflowId(instructionId),
    workflowType: 'instructionReviewWorkflow',
    args: [{ instructionId, customerId }],
    searchAttributes: { CustomerId: customerId },
  };
}

/** Check digits and birth date (beyond the schema); returns the holder with its tax id in bare form. */
function checkHolder(holder: Holder): Holder {
  if (!isValidTaxId(holder.taxId.type, holder.taxId.value)) {
    throw validationError('/holder/taxId/value', `is not a valid ${holder.taxId.type}`);
  }
  const value = normalizeTaxId(holder.taxId.type, holder.taxId.value);
  if (holder.type === 'INDIVIDUAL') {
    // Compared as YYYY-MM-DD strings in UTC: a person born today is not accepted until tomorrow.
    if (holder.dateOfBirth >= new Date().toISOString().slice(0, 10))
      throw validationError('/holder/dateOfBirth', 'must be in the past');
    return { ...holder, taxId: { type: 'CPF', value } };
  }
  return { ...holder, taxId: { type: 'CNPJ', value } };
}

/** `path` is where the instruction sits in the body: `/paymentInstruction` on create, the root on add. */
function checkInstruction(input: PixInstructionInput, path: string): void {
  if (!isValidDictKey(input.dictKeyType, input.dictKey)) {
    throw validationError(`${path}/dictKey`, `is not a valid ${input.dictKeyType} DICT key`);
  }
  if (input.asset !== PIX_ASSET) {
    throw new CambioError('RAIL_ASSET_MISMATCH', `PIX instructions pay out in ${PIX_ASSET}, not ${input.asset}`, {
      rail: PIX_RAIL,
      asset: input.asset,
      allowedAssets: [PIX_ASSET],
    });
  }
}

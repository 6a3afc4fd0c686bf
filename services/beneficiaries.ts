import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { Config } from '../config';
import type { Em } from '../db/orm';
import { Beneficiary, BeneficiarySchema, PaymentInstruction, PaymentInstructionSchema } from '../db/entities';
import {
  BENEFICIARY_LIST,
  countPendingInstructionsLocked,
  instructionCounts,
  newBeneficiary,
} from '../db/repositories/beneficiaries';
import { recordEvent } from '../db/repositories/events';
import { DictKeyType, dictKeyAsHeld, isReceivingKey, isValidDictKey, sameDictKey } from '../domain/dict-key';
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
import { CRYPTO_RAIL, isCryptoAsset } from '../rails/crypto/connector';
import { CRYPTO_ASSETS } from '../rails/crypto/config';
import { getAddress, isAddress, zeroAddress } from 'viem';
import { WALLET } from '../domain/dict-key';

export interface PixInstructionInput {
  type: 'PIX';
  asset: string;
  dictKeyType: DictKeyType;
  dictKey: string;
}

/** Beyond the spec (decision 0134): a stablecoin address on the deployment's chain (CRYPTO_NETWORK). */
export interface WalletInstructionInput {
  type: 'WALLET';
  asset: string;
  network: string;
  address: string;
}

export type InstructionInput = PixInstructionInput | WalletInstructionInput;

export interface CreateBeneficiary {
  holder: Holder;
  relationshipType: Beneficiary['relationshipType'];
  paymentInstruction: InstructionInput;
}

// PIX settles in reais only (../shared/spec/decisions.md, "Onboarding").

/** Creates a beneficiary with its first instruction (PENDING_REVIEW) and starts that instruction's review. */
export async function createBeneficiary(s: ServiceContext, em: Em, input: CreateBeneficiary) {
  const holder = checkHolder(input.holder);
  const instruction = checkInstruction(s.config, input.paymentInstruction, '/paymentInstruction');
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
    await newInstruction(tx, s.config, b, instruction, now);
  });
  return getBeneficiary(em, beneficiaryId);
}

/** Adds a PIX instruction (PENDING_REVIEW) to a beneficiary of the caller; returns the full beneficiary. */
export async function addPaymentInstruction(s: ServiceContext, em: Em, beneficiaryId: string, given: InstructionInput) {
  const input = checkInstruction(s.config, given, '');
  const now = new Date();
  await inTransaction(em, async (tx) => {
    // The lock serialises concurrent additions, so the duplicate check below cannot race.
    const b = await tx.findOne(BeneficiarySchema, { id: beneficiaryId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!b) throw notFound('beneficiary');
    // The same key twice would be two reviews of one payee; once rejected, it may be submitted again. Per asset: a
    // withdrawal pays an instruction in its own asset, so one wallet address paid in USDC and USDT is two of them
    // (decision 0176); a PIX key is always BRL.
    const live = await tx.find(PaymentInstructionSchema, {
      beneficiaryId,
      asset: input.asset,
      dictKeyType: input.dictKeyType,
      status: { $ne: 'REJECTED' },
    });
    const same = live.find((pi) => sameDictKey(pi.dictKeyType, pi.dictKey, input.dictKey));
    if (same) {
      const what = input.rail === PIX_RAIL ? 'DICT key' : 'address';
      throw new CambioError(
        'INVALID_STATE',
        `this beneficiary already has a ${same.status} ${same.asset} instruction for that ${what}`,
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
 * row in the caller's transaction; the workers of their task queues start the workflows once it commits. 422
 * PAYMENT_INSTRUCTION_LIMIT_REACHED when the customer already has PAYMENT_INSTRUCTIONS_PENDING_MAX waiting.
 */
async function newInstruction(
  tx: Em,
  queues: Pick<Config, 'taskQueue' | 'webhookTaskQueue' | 'paymentInstructionsPendingMax'>,
  b: Beneficiary,
  input: CheckedInstruction,
  now: Date,
): Promise<void> {
  // Each one waits for a person's review in an open workflow with no deadline: a customer (or a leaked key) has a
  // bounded number waiting, counted under the customer's lock so that racing creates cannot pass it (decision 0316).
  const limit = queues.paymentInstructionsPendingMax;
  if ((await countPendingInstructionsLocked(tx)) >= limit) {
    const message = `a customer may have at most ${limit} payment instructions waiting for review`;
    throw new CambioError('PAYMENT_INSTRUCTION_LIMIT_REACHED', `${message}; wait for their review first`, { limit });
  }
  const pi: PaymentInstruction = tx.create(PaymentInstructionSchema, {
    id: randomUUID(),
    beneficiaryId: b.id,
    customerId: b.customerId,
    asset: input.asset,
    rail: input.rail,
    dictKeyType: input.dictKeyType,
    dictKey: input.dictKey,
    network: input.network ?? null,
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
  const summary = `INSTRUCTION REVIEW ${pi.rail} ${pi.dictKeyType} ${pi.dictKey} (${pi.asset})`;
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

/** An instruction as stored: its rail, its key (a WALLET's address EIP-55 checksummed) and its network. */
interface CheckedInstruction {
  asset: string;
  rail: string;
  dictKeyType: string;
  dictKey: string;
  network?: string;
}

/** `path` is where the instruction sits in the body: `/paymentInstruction` on create, the root on add. */
function checkInstruction(config: Config, input: InstructionInput, path: string): CheckedInstruction {
  if (input.type === 'WALLET') return checkWallet(config, input, path);
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
  const dictKey = dictKeyAsHeld(input.dictKeyType, input.dictKey);
  // Every PIX deposit shows this key: a customer may take it for an account of its own. A payout to it would leave
  // Cambio's account for Cambio's account, the customer debited for money nobody received (decision 0312).
  if (isReceivingKey(input.dictKeyType, dictKey, config.pix)) {
    throw validationError(`${path}/dictKey`, "is Cambio's own PIX receiving key, to which nothing is paid out");
  }
  return { asset: input.asset, rail: PIX_RAIL, dictKeyType: input.dictKeyType, dictKey };
}

/**
 * A WALLET instruction (decision 0134): an EVM address on the deployment's chain, for one of the stablecoins. A
 * mixed-case address must be its EIP-55 checksum (a typo in it is caught, not paid); an all-lower or all-upper one
 * carries no checksum and is stored checksummed.
 */
function checkWallet(config: Config, input: WalletInstructionInput, path: string): CheckedInstruction {
  if (!isAddress(input.address, { strict: false })) {
    throw validationError(`${path}/address`, 'is not an EVM address (0x and 40 hex digits)');
  }
  const body = input.address.slice(2);
  const mixedCase = body !== body.toLowerCase() && body !== body.toUpperCase();
  if (mixedCase && !isAddress(input.address, { strict: true })) {
    throw validationError(`${path}/address`, 'has a wrong EIP-55 checksum (check the address for a typo)');
  }
  // Tokens sent there are gone for good (decision 0183): nobody holds the zero address's key, and an ERC-20 keeps
  // what is sent to its own contract.
  const address = getAddress(input.address);
  if (address === zeroAddress) {
    throw validationError(`${path}/address`, 'is the zero address: nobody can spend what is sent there');
  }
  const tokens = Object.values(config.crypto.tokens).filter((t): t is `0x${string}` => !!t);
  if (tokens.some((t) => getAddress(t) === address)) {
    throw validationError(`${path}/address`, "is a token's own contract: it would keep what is sent there");
  }
  if (input.network.toUpperCase() !== config.crypto.network) {
    throw validationError(`${path}/network`, `must be ${config.crypto.network}, the chain this deployment pays on`);
  }
  if (!isCryptoAsset(input.asset)) {
    throw new CambioError('RAIL_ASSET_MISMATCH', `WALLET instructions pay out in stablecoins, not ${input.asset}`, {
      rail: CRYPTO_RAIL,
      asset: input.asset,
      allowedAssets: [...CRYPTO_ASSETS],
    });
  }
  return {
    asset: input.asset,
    rail: CRYPTO_RAIL,
    dictKeyType: WALLET,
    dictKey: address,
    network: config.crypto.network,
  };
}

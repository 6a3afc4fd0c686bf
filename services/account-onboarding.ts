// What a customer changes while onboarding an account: its beneficial owners and its documents. All of it is
// frozen once the account is submitted (UNDER_REVIEW: the reviewer decides on what was submitted) and once it
// is ACTIVE (verified ownership is not rewritten by the customer; an operator handles such a change). Each
// change locks the account row, so a concurrent review submission sees either all of it or none.
import { randomUUID } from 'node:crypto';
import Decimal from 'decimal.js';
import type { Em } from '../db/orm';
import { inTransaction } from '../db/transaction';
import { Account, AccountDocumentSchema, Ubo, UboSchema } from '../db/entities/account';
import { isRequired } from '../domain/requirements';
import { initialStates } from '../domain/states';
import { CambioError, notFound, validationError } from '../domain/errors';
import type { DocumentSummary } from '../db/repositories/accounts';
import { documentBytesLocked } from '../db/repositories/account-documents';
import type { Config } from '../config';
import { checkTaxId, findAccount, TaxIdInput } from './accounts';

type Address = Record<string, string>;

export interface UboInput {
  name: string;
  taxId: TaxIdInput;
  address: Address;
  ownershipPercentage?: number;
}

export interface UboPatch {
  name?: string;
  taxId?: TaxIdInput;
  address?: Address;
  ownershipPercentage?: number | null;
}

export interface DocumentInput {
  documentType: string;
  uboId?: string;
  fileName: string;
  contentType: string;
  content: string;
}

// ../shared/spec/decisions.md, "Onboarding": 5 MiB decoded. Checked on the base64 length before decoding anything.
export const MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function assertEditable(account: Account): void {
  if (account.status !== 'ACTION_REQUIRED') {
    throw new CambioError(
      'INVALID_STATE',
      `account is ${account.status}; UBOs and documents change only while it is ACTION_REQUIRED`,
      {
        status: account.status,
      },
    );
  }
}

async function lockEditable(em: Em, accountId: string): Promise<Account> {
  const account = await findAccount(em, accountId, true);
  assertEditable(account);
  return account;
}

/** The same person twice, or stakes adding up past 100 %, is a data-entry mistake worth catching now. */
function checkOwnership(
  ubos: Ubo[],
  candidate: { id: string; taxId: Ubo['taxId']; ownershipPercentage: number | null },
): void {
  const others = ubos.filter((u) => u.id !== candidate.id);
  if (others.some((u) => u.taxId.type === candidate.taxId.type && u.taxId.value === candidate.taxId.value)) {
    throw validationError('/taxId/value', 'is already used by another UBO of this account');
  }
  // Decimal, not float addition: 33.3 + 33.3 + 33.4 must be exactly 100.
  const total = [...others.map((u) => u.ownershipPercentage), candidate.ownershipPercentage].reduce(
    (sum: Decimal, p) => (p === null ? sum : sum.plus(new Decimal(String(p)))),
    new Decimal(0),
  );
  if (total.greaterThan(100))
    throw validationError('/ownershipPercentage', `brings the UBOs' total ownership to ${total.toFixed()} %, over 100`);
}

export async function addUbo(em: Em, accountId: string, input: UboInput): Promise<Ubo> {
  const taxId = checkTaxId('/taxId', input.taxId);
  const ubo = await inTransaction(em, async (tx) => {
    const account = await lockEditable(tx, accountId);
    const id = randomUUID();
    const ownershipPercentage = input.ownershipPercentage ?? null;
    checkOwnership(await tx.find(UboSchema, { accountId }), { id, taxId, ownershipPercentage });
    const now = new Date();
    const created = tx.create(UboSchema, {
      id,
      accountId,
      customerId: account.customerId,
      name: input.name,
      taxId,
      address: input.address,
      ownershipPercentage,
      status: 'PENDING',
      states: initialStates('PENDING', now),
      createdAt: now,
      updatedAt: now,
    });
    account.updatedAt = now;
    return created;
  });
  return ubo;
}

export async function patchUbo(em: Em, accountId: string, uboId: string, patch: UboPatch): Promise<Ubo> {
  const taxId = patch.taxId ? checkTaxId('/taxId', patch.taxId) : undefined;
  const ubo = await inTransaction(em, async (tx) => {
    const account = await lockEditable(tx, accountId);
    const ubos = await tx.find(UboSchema, { accountId });
    const found = ubos.find((u) => u.id === uboId);
    if (!found) throw notFound('UBO');
    const next = {
      name: patch.name ?? found.name,
      taxId: taxId ?? found.taxId,
      address: patch.address ?? found.address,
      ownershipPercentage:
        patch.ownershipPercentage === undefined ? found.ownershipPercentage : patch.ownershipPercentage,
    };
    checkOwnership(ubos, { id: uboId, taxId: next.taxId, ownershipPercentage: next.ownershipPercentage });
    if (next.taxId.type !== found.taxId.type || next.taxId.value !== found.taxId.value)
      await setAsideIdDocuments(tx, accountId, uboId);
    const now = new Date();
    Object.assign(found, next, { updatedAt: now });
    account.updatedAt = now;
    return found;
  });
  return ubo;
}

// Shown as the requirement's reason (account_documents.reason is varchar(255)).
const ANOTHER_PERSON = "uploaded for the UBO's previous tax id; upload the ID document of the person it names now";

/**
 * A new tax id is another person (decision 0199): the ID document waiting for review proves the previous one, so it
 * must not be reviewed, let alone accepted, as this one's. It moves to `errors` with the reason, and the requirement
 * is met again by an upload. A new name or address alone is a correction of the same person and keeps it.
 */
async function setAsideIdDocuments(tx: Em, accountId: string, uboId: string): Promise<void> {
  const pending = await tx.find(AccountDocumentSchema, { accountId, uboId, status: 'PENDING_VERIFICATION' });
  for (const doc of pending) {
    doc.status = 'REJECTED';
    doc.reason = ANOTHER_PERSON;
  }
}

function decodeContent(content: string): Buffer {
  if (content.length % 4 !== 0 || !BASE64.test(content)) throw validationError('/content', 'is not valid base64');
  const padding = content.endsWith('==') ? 2 : content.endsWith('=') ? 1 : 0;
  const size = (content.length / 4) * 3 - padding;
  if (size > MAX_DOCUMENT_BYTES)
    throw validationError('/content', `decodes to ${size} bytes; at most ${MAX_DOCUMENT_BYTES} are allowed`);
  if (size === 0) throw validationError('/content', 'is empty');
  return Buffer.from(content, 'base64');
}

/**
 * Stores a document for one of the account's requirements; the newest upload per requirement is the one that
 * counts, so a re-upload after a rejection moves the requirement from `errors` to `pendingVerification`. 422
 * DOCUMENT_STORAGE_LIMIT_REACHED when the customer's documents would pass its storage budget (decision 0350).
 */
export async function uploadDocument(
  em: Em,
  accountId: string,
  input: DocumentInput,
  limits: Pick<Config, 'documentStoragePerCustomerMb'>,
): Promise<DocumentSummary> {
  const content = decodeContent(input.content);
  const uboId = input.uboId?.toLowerCase() ?? null;
  const doc = await inTransaction(em, async (tx) => {
    const account = await lockEditable(tx, accountId);
    const uboIds = (await tx.find(UboSchema, { accountId })).map((u) => u.id);
    if (!isRequired(uboIds, input.documentType, uboId)) throw requirementMismatch(input.documentType, uboId, uboIds);
    await requireStorageFor(tx, content.length, limits.documentStoragePerCustomerMb);
    const now = new Date();
    const created = tx.create(AccountDocumentSchema, {
      id: randomUUID(),
      accountId,
      customerId: account.customerId,
      documentType: input.documentType,
      uboId,
      fileName: input.fileName,
      contentType: input.contentType,
      sizeBytes: content.length,
      content,
      status: 'PENDING_VERIFICATION',
      reason: null,
      createdAt: now,
    });
    account.updatedAt = now;
    return created;
  });
  return doc;
}

/** 422 DOCUMENT_STORAGE_LIMIT_REACHED unless `bytes` more fit the customer's budget, counted under its lock. */
async function requireStorageFor(tx: Em, bytes: number, budgetMb: number): Promise<void> {
  const limitBytes = budgetMb * 1024 * 1024;
  const usedBytes = await documentBytesLocked(tx);
  if (usedBytes + bytes > limitBytes) {
    throw new CambioError(
      'DOCUMENT_STORAGE_LIMIT_REACHED',
      `the customer's documents take ${usedBytes} of its ${limitBytes} bytes; this one (${bytes}) does not fit`,
      { limitBytes, usedBytes },
    );
  }
}

function requirementMismatch(documentType: string, uboId: string | null, uboIds: string[]): CambioError {
  if (documentType === 'ID_DOCUMENT' && uboId === null) return validationError('/uboId', 'is required for ID_DOCUMENT');
  if (documentType !== 'ID_DOCUMENT' && uboId !== null)
    return validationError('/uboId', `must be omitted for ${documentType}`);
  if (uboId !== null && !uboIds.includes(uboId)) return validationError('/uboId', 'is not a UBO of this account');
  return validationError('/documentType', `is not required by this account`);
}

// Beneficiaries and their payment instructions (tables `beneficiaries`, `payment_instructions`): through the ORM
// (a QueryBuilder for the instruction counts a page shows, one grouped statement per page), except the list's page
// (db/repositories/lists.ts). Tenant: the ORM's tenant filter; a new beneficiary takes the customer from the
// EntityManager's scope (`tenantOf`), here only.
import { raw } from '@mikro-orm/core';
import {
  Beneficiary,
  BeneficiarySchema,
  PaymentInstruction,
  PaymentInstructionSchema,
  RELATIONSHIP_TYPES,
} from '../entities';
import type { FieldCatalogue } from '../../domain/list-filters';
import { tenantOf, type Em } from '../orm';
import type { ListResource } from './lists';
import { lockUntilTransactionEnds } from '../transaction-lock';

/** GET /api/beneficiaries (../shared/spec/decisions.md, "Lists and filters": relationshipType and createdAt). */
export const BENEFICIARY_LIST: ListResource<Beneficiary> = {
  entity: BeneficiarySchema,
  from: 'beneficiaries b',
  alias: 'b',
  catalogue: {
    relationshipType: { type: 'enum', values: RELATIONSHIP_TYPES, sql: 'b.relationship_type' },
    createdAt: { type: 'timestamp', sql: 'b.created_at' },
  } satisfies FieldCatalogue,
};

/** A new beneficiary of the EntityManager's customer, persisted at the next flush. */
export function newBeneficiary(em: Em, fields: Omit<Beneficiary, 'customerId'>): Beneficiary {
  return em.create(BeneficiarySchema, { ...fields, customerId: tenantOf(em) });
}

/**
 * How many instructions of the EntityManager's customer are PENDING_REVIEW, counted under a lock on the customer's
 * new instructions that its transaction holds until it ends: a create that counts, then adds, cannot race another
 * create of the same customer past the cap (decision 0316). Two statements on purpose, as for subscriptions (0258):
 * under READ COMMITTED a statement sees what was committed when it began, so a count in the statement that waits for
 * the lock would miss the row the lock's previous holder committed. Other customers' creates take other locks.
 */
export async function countPendingInstructionsLocked(em: Em): Promise<number> {
  const customerId = tenantOf(em);
  await lockUntilTransactionEnds(em, `cambio:instructions:${customerId}`);
  return em.count(PaymentInstructionSchema, { status: 'PENDING_REVIEW' });
}

/** How many payment instructions each of these beneficiaries (of the EntityManager's customer) has. */
export async function instructionCounts(em: Em, beneficiaryIds: string[]): Promise<Map<string, number>> {
  if (beneficiaryIds.length === 0) return new Map();
  const qb = em
    .createQueryBuilder(PaymentInstructionSchema, 'pi')
    .select(['pi.beneficiaryId', raw('count(*)::int').as('n')])
    .where({ beneficiaryId: { $in: beneficiaryIds } })
    .groupBy('pi.beneficiaryId');
  // A QueryBuilder applies the entity's filters (the tenant) only when asked to.
  await qb.applyFilters();
  const rows = await qb.execute<Array<{ beneficiaryId: string; n: number }>>('all');
  return new Map(rows.map((r) => [r.beneficiaryId, r.n]));
}

/**
 * An instruction's status as the database has it now, past the identity map (which would keep answering with the
 * first status it saw), on the caller's connection; null when the scope has no such instruction.
 */
export async function instructionStatus(em: Em, instructionId: string): Promise<string | null> {
  const fresh = em.fork({ keepTransactionContext: true });
  const found = await fresh.findOne(PaymentInstructionSchema, { id: instructionId }, { fields: ['status'] });
  return found?.status ?? null;
}

/** An instruction waiting for review with its beneficiary: what `cambio instruction list` shows operators. */
export interface PendingInstruction {
  instruction: PaymentInstruction;
  beneficiary: Beneficiary;
}

/**
 * The instructions PENDING_REVIEW of every customer, oldest first (operators act across tenants: a system-scope
 * `em`), with their beneficiaries; at most `limit`. A partial index holds only those waiting
 * (`Migration20261205310000PendingInstructionIndex`), so the read never scans every instruction ever approved.
 */
export async function pendingInstructions(em: Em, limit = 1000): Promise<PendingInstruction[]> {
  const instructions = await em.find(
    PaymentInstructionSchema,
    { status: 'PENDING_REVIEW' },
    { orderBy: { createdAt: 'asc', id: 'asc' }, limit },
  );
  const ids = [...new Set(instructions.map((pi) => pi.beneficiaryId))];
  const beneficiaries = ids.length > 0 ? await em.find(BeneficiarySchema, { id: { $in: ids } }) : [];
  const byId = new Map(beneficiaries.map((b) => [b.id, b]));
  return instructions.flatMap((pi) => {
    const beneficiary = byId.get(pi.beneficiaryId);
    return beneficiary ? [{ instruction: pi, beneficiary }] : [];
  });
}

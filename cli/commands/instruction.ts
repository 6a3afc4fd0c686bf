import { presentBeneficiaryRecord } from '../../presenters/beneficiary';
import type { Command } from 'commander';
import { PaymentInstructionSchema } from '../../db/entities';
import { systemEm, tenantEm } from '../../db/orm';
import { CambioError } from '../../domain/errors';
import type { ServiceContext } from '../../services/context';
import { decideInstruction } from '../../services/instruction-review';
import type { InstructionDecision } from '../../workflows/instruction-review';
import { output, withServices, withTemporalServices } from '../context';
import { pendingInstructions, type PendingInstruction } from '../../db/repositories/beneficiaries';
import { holderName } from '../../domain/payee';
import { operatorActor } from '../audit';
import { targetId } from '../ids';

/**
 * Operators act across customers: the instruction is found with the system scope, then decided through the
 * same service as the sandbox route, in the scope of the customer that owns it.
 */
async function decide(s: ServiceContext, instructionId: string, decision: InstructionDecision, reason?: string) {
  const found = await systemEm(s.orm).findOne(PaymentInstructionSchema, { id: instructionId });
  if (!found) throw new CambioError('NOT_FOUND', `payment instruction ${instructionId} not found`);
  const request = reason === undefined ? { decision } : { decision, reason };
  const em = tenantEm(s.orm, found.customerId);
  return presentBeneficiaryRecord(await decideInstruction(s, em, instructionId, request, operatorActor()));
}

function report(json: boolean, instructionId: string, beneficiary: Awaited<ReturnType<typeof decide>>): void {
  const pi = beneficiary.paymentInstructions.find((p) => p.id === instructionId);
  output(
    json,
    beneficiary,
    `instruction ${instructionId} ${pi?.currentState.status ?? 'unknown'} (beneficiary ${beneficiary.id})`,
  );
}

/**
 * One instruction waiting for review as an operator weighs it (decision 0311): the key or address and where it pays,
 * and the holder it is claimed for, whose name and tax id the key's owner should match.
 */
function pendingRow({ instruction: pi, beneficiary: b }: PendingInstruction) {
  const holder = b.holder as { taxId?: { type: string; value: string } } & Parameters<typeof holderName>[0];
  return {
    id: pi.id,
    customerId: pi.customerId,
    beneficiaryId: b.id,
    status: pi.status,
    asset: pi.asset,
    rail: pi.rail,
    keyType: pi.dictKeyType,
    key: pi.dictKey,
    ...(pi.network ? { network: pi.network } : {}),
    holder: { name: holderName(holder), taxId: holder.taxId },
    relationshipType: b.relationshipType,
    since: pi.createdAt.toISOString(),
  };
}

function pendingLine(r: ReturnType<typeof pendingRow>): string {
  const where = `${r.asset}${r.network ? ` on ${r.network}` : ''}`;
  const taxId = r.holder.taxId ? ` ${r.holder.taxId.type} ${r.holder.taxId.value}` : '';
  return (
    `${r.id} ${r.status} ${r.rail} ${r.keyType} ${r.key} (${where}) for ${r.holder.name}${taxId} ` +
    `${r.relationshipType} of customer ${r.customerId} since ${r.since}`
  );
}

export function instructionCommands(program: Command): void {
  const instruction = program.command('instruction').description('review beneficiary payment instructions');
  instruction
    .command('list')
    .description('list the payment instructions waiting for review (PENDING_REVIEW) across customers, oldest first')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const rows = (await withServices((s) => pendingInstructions(systemEm(s.orm)))).map(pendingRow);
      output(!!opts.json, rows, rows.map(pendingLine).join('\n') || 'no instructions waiting for review');
    });
  instruction
    .command('approve <instructionId>')
    .description('approve a PENDING_REVIEW payment instruction')
    .option('--json', 'print the updated beneficiary as JSON')
    .action(async (typed: string, opts: { json?: boolean }) => {
      const instructionId = targetId(typed, 'instruction');
      const beneficiary = await withTemporalServices((s) => decide(s, instructionId, 'APPROVE'));
      report(!!opts.json, instructionId, beneficiary);
    });
  instruction
    .command('reject <instructionId>')
    .description('reject a PENDING_REVIEW payment instruction')
    .requiredOption('--reason <reason>', 'why; stored as the rejection reason message')
    .option('--json', 'print the updated beneficiary as JSON')
    .action(async (typed: string, opts: { reason: string; json?: boolean }) => {
      const instructionId = targetId(typed, 'instruction');
      const beneficiary = await withTemporalServices((s) => decide(s, instructionId, 'REJECT', opts.reason));
      report(!!opts.json, instructionId, beneficiary);
    });
}

import { presentBeneficiaryRecord, presentBeneficiarySummaries } from '../../presenters/beneficiary';
import type { RouteTable } from './define';
import type { ServiceContext } from '../../services/context';
import { listQuerySchema } from '../../lists/run-list';
import { pageOf, ref } from '../schemas/responses';
import {
  beneficiaryParams,
  createBeneficiaryBody,
  instructionParams,
  instructionReviewBody,
  paymentInstructionBody,
} from '../schemas/beneficiaries';
import {
  addPaymentInstruction,
  createBeneficiary,
  CreateBeneficiary,
  getBeneficiary,
  listBeneficiaries,
  InstructionInput,
} from '../../services/beneficiaries';
import {
  applyInstructionDecision,
  beneficiaryOfInstruction,
  recordInstructionDecision,
} from '../../services/instruction-review';
import { sandboxDecision } from './sandbox-decision';
import type { InstructionDecisionRequest } from '../../workflows/instruction-review';

export function beneficiaryRoutes(table: RouteTable, s: ServiceContext): void {
  table.add({
    method: 'post',
    path: '/api/beneficiaries',
    summary: 'Save a payee with its first PIX payment instruction (PENDING_REVIEW)',
    tag: 'Beneficiaries',
    body: createBeneficiaryBody,
    bodyRequired: true,
    response: { status: 201, schema: ref('Beneficiary'), description: 'The Beneficiary' },
    errors: ['PAYMENT_INSTRUCTION_LIMIT_REACHED'],
    async handler(ctx) {
      ctx.body = presentBeneficiaryRecord(
        await createBeneficiary(s, ctx.state.em, ctx.request.body as CreateBeneficiary),
      );
      ctx.status = 201;
    },
  });

  table.add({
    method: 'post',
    path: '/api/beneficiaries/:beneficiaryId/payment-instructions',
    summary: 'Add a PIX payment instruction (PENDING_REVIEW) to a beneficiary',
    tag: 'Beneficiaries',
    params: beneficiaryParams,
    body: paymentInstructionBody,
    bodyRequired: true,
    response: { status: 201, schema: ref('Beneficiary'), description: 'The full Beneficiary' },
    errors: ['INVALID_STATE', 'PAYMENT_INSTRUCTION_LIMIT_REACHED'],
    async handler(ctx) {
      ctx.body = presentBeneficiaryRecord(
        await addPaymentInstruction(s, ctx.state.em, ctx.params.beneficiaryId, ctx.request.body as InstructionInput),
      );
      ctx.status = 201;
    },
  });

  table.add({
    method: 'get',
    path: '/api/beneficiaries',
    summary: 'List beneficiaries (summaries); filters on relationshipType and createdAt',
    tag: 'Beneficiaries',
    query: listQuerySchema,
    response: { status: 200, schema: pageOf('BeneficiarySummary') },
    async handler(ctx) {
      ctx.body = presentBeneficiarySummaries(
        await listBeneficiaries(ctx.state.em, ctx.state.query, s.config.cursorSecret),
      );
    },
  });

  table.add({
    method: 'get',
    path: '/api/beneficiaries/:beneficiaryId',
    summary: 'Retrieve a beneficiary with all its payment instructions',
    tag: 'Beneficiaries',
    params: beneficiaryParams,
    response: { status: 200, schema: ref('Beneficiary') },
    async handler(ctx) {
      ctx.body = presentBeneficiaryRecord(await getBeneficiary(ctx.state.em, ctx.params.beneficiaryId));
    },
  });

  table.add({
    method: 'post',
    path: '/api/sandbox/payment-instructions/:instructionId/review',
    summary: 'Sandbox: approve or reject a PENDING_REVIEW payment instruction as compliance would',
    tag: 'Sandbox',
    sandbox: true,
    params: instructionParams,
    body: instructionReviewBody,
    bodyRequired: true,
    response: { status: 200, schema: ref('Beneficiary'), description: 'The updated Beneficiary' },
    errors: ['INVALID_STATE'],
    // Recorded, applied by the review workflow, answered: no transaction stays open while the workflow works.
    ownsIdempotency: true,
    async handler(ctx) {
      const { instructionId } = ctx.params;
      await sandboxDecision(
        ctx,
        (tx, who) =>
          recordInstructionDecision(s, tx, instructionId, ctx.request.body as InstructionDecisionRequest, who),
        (requestEm, decisionId) => applyInstructionDecision(s, requestEm, instructionId, decisionId),
        async (answerEm) => presentBeneficiaryRecord(await beneficiaryOfInstruction(answerEm, instructionId)),
      );
    },
  });
}

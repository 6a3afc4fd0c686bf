import type Koa from 'koa';
import type { RouteTable } from './define';
import type { ServiceContext } from '../../services/context';
import { listQuerySchema, ListQuery } from '../../lists/run-list';
import { idParams } from '../schemas/common';
import { depositBody, swapBody, transferBody, withdrawalBody } from '../schemas/operations';
import { chargeForDeposit, createDepositOrCancelCharge, DepositBody } from '../../services/operations/deposit';
import { createSwap } from '../../services/operations/swap';
import { createTransfer, TransferBody } from '../../services/operations/transfer';
import { createWithdrawal, WithdrawalBody } from '../../services/operations/withdrawal';
import { ACCOUNT_AND_QUOTE_REFUSALS } from '../../services/operations/checks';
import { getOperation, listOperations } from '../../services/operations/read';
import { gateOperation } from '../../services/operations/admission';
import { pageOf, ref } from '../schemas/responses';
import type { ErrorCode } from '../../domain/errors';
import type { Operation } from '../../db/entities';
import { presentOperation, presentOperations } from '../../presenters/operation';

type Creator = (s: ServiceContext, ctx: Koa.Context) => Promise<Operation>;

const CREATORS: Array<{
  kind: string;
  body: object;
  create: Creator;
  errors: ErrorCode[];
  prepare?: (s: ServiceContext, ctx: Koa.Context) => Promise<void>;
}> = [
  {
    kind: 'deposit',
    errors: [...ACCOUNT_AND_QUOTE_REFUSALS, 'RAIL_ASSET_MISMATCH', 'RAIL_NOT_CONFIGURED', 'RAIL_REJECTED'],
    body: depositBody,
    // A PIX deposit's charge exists at the PSP before the transaction begins: the POST answers with it.
    prepare: async (s, ctx) => {
      const body = ctx.request.body as DepositBody;
      ctx.state.charge = await chargeForDeposit(s, ctx.state.em, body, ctx.state.idempotencyKey, ctx.state.customerId);
    },
    // A refusal after the charge: the charge is cancelled, as no deposit shows it (docs/decisions/0195).
    create: (s, ctx) => createDepositOrCancelCharge(s, ctx.state.em, ctx.request.body as DepositBody, ctx.state.charge),
  },
  {
    kind: 'withdrawal',
    errors: [
      ...ACCOUNT_AND_QUOTE_REFUSALS,
      'INLINE_BENEFICIARY_NOT_SUPPORTED',
      'PAYMENT_INSTRUCTION_NOT_APPROVED',
      'INSUFFICIENT_FUNDS',
      'RAIL_NOT_CONFIGURED',
    ],
    body: withdrawalBody,
    create: (s, ctx) => createWithdrawal(s, ctx.state.em, ctx.request.body as WithdrawalBody),
  },
  {
    kind: 'swap',
    errors: [...ACCOUNT_AND_QUOTE_REFUSALS, 'INSUFFICIENT_FUNDS'],
    body: swapBody,
    create: (s, ctx) => createSwap(s, ctx.state.em, ctx.request.body as { accountId: string; quoteId: string }),
  },
  {
    kind: 'transfer',
    errors: [
      ...ACCOUNT_AND_QUOTE_REFUSALS,
      'INVALID_AMOUNT',
      'INVALID_AMOUNT_PRECISION',
      'SAME_ACCOUNT_TRANSFER',
      'INSUFFICIENT_FUNDS',
    ],
    body: transferBody,
    create: (s, ctx) => createTransfer(s, ctx.state.em, ctx.request.body as TransferBody),
  },
];

export function operationRoutes(table: RouteTable, s: ServiceContext): void {
  for (const { kind, body, create, errors, prepare } of CREATORS) {
    table.add({
      method: 'post',
      path: `/api/operations/${kind}`,
      summary: `Create a ${kind} from a quote (REQUESTED)`,
      tag: 'Operations',
      body,
      bodyRequired: true,
      response: { status: 201, schema: ref('Operation'), description: 'The operation, REQUESTED' },
      errors,
      // A deposit's charge is a PSP call: a key that already answered is answered before it, calling nothing.
      prepareCallsProvider: prepare !== undefined,
      // A customer past its backlog bound is refused before the transaction (and before a deposit's charge).
      async prepare(ctx: Koa.Context) {
        await gateOperation(s, ctx.state.em, ctx.state.idempotencyKey);
        await prepare?.(s, ctx);
      },
      async handler(ctx) {
        ctx.body = presentOperation(await create(s, ctx));
        ctx.status = 201;
      },
    });
  }
  table.add({
    method: 'get',
    path: '/api/operations/:operationId',
    summary: 'Read one operation',
    tag: 'Operations',
    params: idParams('operationId'),
    response: { status: 200, schema: ref('Operation') },
    async handler(ctx) {
      ctx.body = presentOperation(await getOperation(ctx.state.em, ctx.params.operationId));
    },
  });
  table.add({
    method: 'get',
    path: '/api/operations',
    summary:
      'List operations (filters: intent.type, currentState.status, account.id, sourceAmount.asset, ' +
      'targetAmount.asset, createdAt, tags.key, tags.value)',
    tag: 'Operations',
    query: listQuerySchema,
    response: { status: 200, schema: pageOf('Operation') },
    async handler(ctx) {
      ctx.body = presentOperations(
        await listOperations(ctx.state.em, ctx.state.query as ListQuery, s.config.cursorSecret),
      );
    },
  });
}

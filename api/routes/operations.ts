import type Koa from 'koa';
import type { RouteTable } from './define';
import type { ServiceContext } from '../services/context';
import { listQuerySchema, ListQuery } from '../lists/run-list';
import { idParams } from '../schemas/common';
import { depositBody, swapBody, transferBody, withdrawalBody } from '../schemas/operations';
import { createDeposit, DepositBody } from '../services/operations/deposit';
import { createSwap } from '../services/operations/swap';
import { createTransfer, TransferBody } from '../services/operations/transfer';
import { createWithdrawal, WithdrawalBody } from '../services/operations/withdrawal';
import { getOperation, listOperations } from '../services/operations/read';

type Creator = (s: ServiceContext, ctx: Koa.Context) => Promise<unknown>;

const CREATORS: Array<{ kind: string; body: object; create: Creator }> = [
  { kind: 'deposit', body: depositBody, create: (s, ctx) => createDeposit(s, ctx.state.em, ctx.request.body as DepositBody) },
  { kind: 'withdrawal', body: withdrawalBody, create: (s, ctx) => createWithdrawal(s, ctx.state.em, ctx.request.body as WithdrawalBody) },
  { kind: 'swap', body: swapBody, create: (s, ctx) => createSwap(s, ctx.state.em, ctx.request.body as { accountId: string; quoteId: string }) },
  { kind: 'transfer', body: transferBody, create: (s, ctx) => createTransfer(s, ctx.state.em, ctx.request.body as TransferBody) },
];

export function operationRoutes(table: RouteTable, s: ServiceContext): void {
  for (const { kind, body, create } of CREATORS) {
    table.add({
      method: 'post',
      path: `/api/operations/${kind}`,
      summary: `Create a ${kind} from a quote (REQUESTED)`,
      tag: 'Operations',
      body,
      bodyRequired: true,
      response: { status: 201, description: 'The operation, REQUESTED' },
      async handler(ctx) {
        ctx.body = await create(s, ctx);
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
    async handler(ctx) {
      ctx.body = await getOperation(ctx.state.em, ctx.params.operationId);
    },
  });
  table.add({
    method: 'get',
    path: '/api/operations',
    summary: 'List operations (filters: intent.type, currentState.status, account.id, sourceAmount.asset, targetAmount.asset, createdAt, tags.key, tags.value)',
    tag: 'Operations',
    query: listQuerySchema,
    async handler(ctx) {
      ctx.body = await listOperations(ctx.state.em, ctx.state.query as ListQuery, s.config.cursorSecret);
    },
  });
}

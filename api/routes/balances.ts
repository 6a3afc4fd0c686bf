import type { RouteTable } from './define';
import { idParams } from '../schemas/common';
import { getBalances } from '../../services/balances';
import { ref } from '../schemas/responses';
import { periodBoundSchema } from '../../domain/report-period';

const balancesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    asOf: {
      ...periodBoundSchema,
      description:
        'The balances as they stood at this instant (postings booked before it), not in the future. ' +
        periodBoundSchema.description,
    },
  },
} as const;

export function balanceRoutes(table: RouteTable): void {
  table.add({
    method: 'get',
    path: '/api/accounts/:accountId/balances',
    summary: 'Balances of an account per asset: available, held, total; now, or at an instant with asOf',
    tag: 'Accounts',
    params: idParams('accountId'),
    query: balancesQuery,
    response: { status: 200, schema: ref('Balances') },
    async handler(ctx) {
      ctx.body = await getBalances(ctx.state.em, ctx.params.accountId, ctx.state.query.asOf as string | undefined);
    },
  });
}

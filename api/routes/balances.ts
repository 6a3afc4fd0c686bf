import type { RouteTable } from './define';
import { idParams } from '../schemas/common';
import { getBalances } from '../services/balances';
import { ref } from '../schemas/responses';

export function balanceRoutes(table: RouteTable): void {
  table.add({
    method: 'get',
    path: '/api/accounts/:accountId/balances',
    summary: 'Balances of an account per asset: available, held, total',
    tag: 'Accounts',
    params: idParams('accountId'),
    response: { status: 200, schema: ref('Balances') },
    async handler(ctx) {
      ctx.body = await getBalances(ctx.state.em, ctx.params.accountId);
    },
  });
}

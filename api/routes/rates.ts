import type { RouteTable } from './define';
import type { ServiceContext } from '../../services/context';
import { ASSETS, type AssetCode } from '../../domain/assets';
import { currentRates } from '../../services/rates';
import { ref } from '../schemas/responses';

const ratesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    base: { type: 'string', enum: [...ASSETS], default: 'USD', description: 'The asset the mids are per 1 unit of' },
  },
} as const;

export function rateRoutes(table: RouteTable, s: ServiceContext): void {
  table.add({
    method: 'get',
    path: '/api/rates',
    summary: 'The mid rates new quotes would use now against one asset, each with its source and source time',
    tag: 'Quotes',
    query: ratesQuery,
    response: { status: 200, schema: ref('Rates') },
    async handler(ctx) {
      ctx.body = await currentRates(s.rates, ((ctx.state.query.base as string | undefined) ?? 'USD') as AssetCode);
    },
  });
}

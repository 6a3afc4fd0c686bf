import type { RouteTable } from './define';
import type { ServiceContext } from '../services/context';
import { issueToken } from '../services/auth';
import { CambioError } from '../errors';
import { clientAddress, TokenThrottle } from '../overload/token-throttle';
import { ref } from '../schemas/responses';

const tokenRequest = {
  type: 'object',
  additionalProperties: false,
  required: ['clientId', 'clientSecret'],
  properties: {
    clientId: { type: 'string', minLength: 1, maxLength: 200 },
    clientSecret: { type: 'string', minLength: 1, maxLength: 500 },
  },
};

export function authRoutes(table: RouteTable, s: ServiceContext): void {
  const throttle = new TokenThrottle({
    clientFailuresPerMinute: s.config.tokenClientFailuresPerMinute,
    addressFailuresPerMinute: s.config.tokenAddressFailuresPerMinute,
    addressPerSecond: s.config.tokenAddressPerSecond,
  });
  // Secret checks under way per client id and address (at most the scrypt bound's 34 entries), so that a 429 for
  // busy checks can say how long the failures they may still record would keep this client out.
  const checking = { client: new Map<string, number>(), address: new Map<string, number>() };
  const count = (m: Map<string, number>, k: string, d: number) => {
    const n = (m.get(k) ?? 0) + d;
    if (n > 0) m.set(k, n);
    else m.delete(k);
  };
  table.add({
    method: 'post',
    path: '/api/oauth/client/token',
    summary: 'Exchange client credentials for a bearer token (valid 3600 s)',
    tag: 'Authentication',
    public: true,
    body: tokenRequest,
    bodyRequired: true,
    response: { status: 200, schema: ref('Token') },
    errors: ['INVALID_CLIENT'],
    async handler(ctx) {
      const { clientId, clientSecret } = ctx.request.body as { clientId: string; clientSecret: string };
      const address = clientAddress(ctx);
      throttle.admit(clientId, address);
      count(checking.client, clientId, 1);
      count(checking.address, address, 1);
      try {
        ctx.body = await issueToken(s.orm, s.config, s.signingKey, clientId, clientSecret);
      } catch (err) {
        if (err instanceof CambioError && err.code === 'INVALID_CLIENT') throttle.failed(clientId, address);
        if (err instanceof CambioError && err.code === 'RATE_LIMITED') {
          // Refused for busy checks: the others may still fail and spend this client's budget (not this one).
          const pending = {
            client: (checking.client.get(clientId) ?? 1) - 1,
            address: (checking.address.get(address) ?? 1) - 1,
          };
          err.details.retryAfterSeconds = throttle.retryAfter(clientId, address, pending);
        }
        throw err;
      } finally {
        count(checking.client, clientId, -1);
        count(checking.address, address, -1);
      }
    },
  });
}

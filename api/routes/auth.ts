import type { RouteTable } from './define';
import type { ServiceContext } from '../../services/context';
import { issueToken } from '../../services/auth';
import { CambioError } from '../../domain/errors';
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
      const attempt = throttle.admit(clientId, address);
      try {
        ctx.body = await issueToken(s.orm, s.config, s.signingKey, clientId, clientSecret);
        attempt.release();
      } catch (err) {
        // A wrong secret or an unknown client keeps its reserved failure; anything else was not a guess.
        if (!(err instanceof CambioError && err.code === 'INVALID_CLIENT')) attempt.release();
        // Refused for busy checks: the wait the failure budgets impose now, checks still running included.
        if (err instanceof CambioError && err.code === 'RATE_LIMITED')
          err.details.retryAfterSeconds = throttle.retryAfter(clientId, address);
        throw err;
      }
    },
  });
}

import type Koa from 'koa';
import type { Config } from '../../config';
import { tenantEm, Orm } from '../../db/orm';
import { CambioError } from '../../domain/errors';
import { verifyToken } from '../../services/auth';
import type { CustomerAccess } from '../../services/customer-access';
import type { KeyPair } from '../../services/signing-keys';
import { VerifiedTokens } from '../../services/verified-tokens';
import { authorizationHeaders } from './authorization-headers';

// RFC 9110 11.1: the scheme is case-insensitive and one or more spaces may follow it; client libraries write
// `bearer` as often as `Bearer` (decision 0264). The token itself is one token68, as RFC 6750 2.1 writes it.
const BEARER = /^Bearer +([A-Za-z0-9._~+/=-]+)$/i;

/**
 * Bearer auth. On success the request gets its customer id and an EntityManager scoped to that customer
 * by the tenant filter: handlers cannot forget isolation because they never hold another scope.
 */
export function bearerAuth(
  config: Config,
  orm: Orm,
  key: KeyPair,
  access: CustomerAccess,
  afterAuth: (ctx: Koa.Context) => void = () => {},
) {
  // Verified once per token string until its exp (decision 0034); activeness is checked every time.
  const verified = new VerifiedTokens();
  return async (ctx: Koa.Context): Promise<void> => {
    // Node keeps the first of two Authorization headers and drops the other: which credential counts would be the
    // order's accident, so two are refused.
    if (authorizationHeaders(ctx.req.rawHeaders) > 1) {
      throw new CambioError('UNAUTHORIZED', 'more than one Authorization header: send one');
    }
    const match = BEARER.exec(ctx.get('Authorization'));
    if (!match) throw new CambioError('UNAUTHORIZED', 'missing or malformed Authorization: Bearer header');
    const { customerId, issuedAt } = verifyToken(config, key, match[1], verified);
    // A valid signature is not enough: the customer must still exist, not be disabled, and not have been disabled
    // since the token was issued (decision 0231).
    if (!(await access.admits(customerId, issuedAt))) throw revoked();
    ctx.state.customerId = customerId;
    ctx.state.tokenIssuedAt = issuedAt;
    ctx.state.em = tenantEm(orm, customerId);
    afterAuth(ctx);
  };
}

/**
 * The customer's standing asked again for a request `bearerAuth` let in: the gate checks a token when the headers
 * arrive, and the request may then wait seconds for its customer's slot and for its body (up to
 * HTTP_REQUEST_TIMEOUT_MS). The route asks once both are in, so a disable in between refuses it like any later
 * request (within CUSTOMER_CACHE_SECONDS), instead of acting for a customer disabled on every process.
 */
export function stillAdmitted(access: CustomerAccess) {
  return async (ctx: Koa.Context): Promise<void> => {
    if (!(await access.admits(ctx.state.customerId, ctx.state.tokenIssuedAt))) throw revoked();
  };
}

function revoked(): CambioError {
  return new CambioError(
    'UNAUTHORIZED',
    'access token revoked: the customer is disabled, was disabled after this token was issued, or no longer exists',
  );
}

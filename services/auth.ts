import { BeforeCommit, inTransaction } from '../db/transaction';
import { randomBytes, randomUUID, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import jwt from 'jsonwebtoken';
import { LockMode } from '@mikro-orm/core';
import type { Config } from '../config';
import type { Orm } from '../db/orm';
import { ApiClient, ApiClientSchema, CustomerSchema } from '../db/entities';
import { markSecretUsed } from '../db/repositories/customers';
import { CambioError } from '../domain/errors';
import type { KeyPair } from './signing-keys';
import { boundedSecretWork } from './secret-work';
import type { VerifiedToken, VerifiedTokens } from './verified-tokens';
import { VerifiedSecrets } from './verified-secrets';

const scrypt = promisify(scryptCb) as (secret: string, salt: Buffer, keylen: number) => Promise<Buffer>;

export const TOKEN_LIFETIME_SECONDS = 3600;

async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(secret, salt, 32);
  return `scrypt$${salt.toString('base64')}$${hash.toString('base64')}`;
}

// Secrets this process checked right recently: a repeat costs an HMAC, not a scrypt (decision 0248).
const verifiedSecrets = new VerifiedSecrets();

async function secretMatches(secret: string, stored: string): Promise<boolean> {
  const [scheme, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  if (verifiedSecrets.has(stored, secret)) return true;
  const expected = Buffer.from(hash, 'base64');
  const actual = await boundedSecretWork(() => scrypt(secret, Buffer.from(salt, 'base64'), expected.length));
  const matches = timingSafeEqual(actual, expected);
  if (matches) verifiedSecrets.remember(stored, secret);
  return matches;
}

// Checked against when no client has the id: an unknown client then costs the scrypt a known one does, so the
// answer's time does not tell which client ids exist (decision 0201). No secret hashes to 32 zero bytes.
const NO_CLIENT_HASH = `scrypt$${randomBytes(16).toString('base64')}$${Buffer.alloc(32).toString('base64')}`;

export interface CreatedCustomer {
  customerId: string;
  clientId: string;
  clientSecret: string;
}

const CUSTOMER_NAME_MAX_LENGTH = 255;

/** Operator action: a customer and its first credentials. The secret is returned once and stored hashed. */
export async function createCustomer(orm: Orm, name: string, customerId = randomUUID()): Promise<CreatedCustomer> {
  if (!name.trim())
    throw new CambioError('VALIDATION_ERROR', 'name must not be empty', {
      errors: [{ path: '/name', message: 'must not be empty' }],
    });
  // The column's bound (customers.name varchar(255)), said as the input's fault rather than the database's.
  if (name.trim().length > CUSTOMER_NAME_MAX_LENGTH)
    throw new CambioError('VALIDATION_ERROR', `name must be at most ${CUSTOMER_NAME_MAX_LENGTH} characters`, {
      errors: [{ path: '/name', message: `must be at most ${CUSTOMER_NAME_MAX_LENGTH} characters` }],
    });
  const clientId = `cli_${randomBytes(12).toString('hex')}`;
  const clientSecret = `sec_${randomBytes(24).toString('base64url')}`;
  const secretHash = await hashSecret(clientSecret);
  await inTransaction(orm.em.fork(), async (em) => {
    em.create(CustomerSchema, { id: customerId, name: name.trim(), createdAt: new Date() });
    // The client row references the customer (foreign key); the unit of work does not know that order.
    await em.flush();
    em.create(ApiClientSchema, { clientId, customerId, secretHash, createdAt: new Date() });
  });
  return { customerId, clientId, clientSecret };
}

/** The secret a rotation replaced, during its grace period only. */
async function previousSecretMatches(secret: string, client: ApiClient): Promise<boolean> {
  const expiresAt = client.previousSecretExpiresAt;
  if (!client.previousSecretHash || !expiresAt || expiresAt.getTime() <= Date.now()) return false;
  return secretMatches(secret, client.previousSecretHash);
}

/** Whether a secret of this hash still gets tokens: the client's current one, or the one replaced, in its grace. */
function stillValid(client: ApiClient, hash: string): boolean {
  if (client.secretHash === hash) return true;
  const expiresAt = client.previousSecretExpiresAt;
  return client.previousSecretHash === hash && !!expiresAt && expiresAt.getTime() > Date.now();
}

export interface RotatedSecret {
  customerId: string;
  clientId: string;
  clientSecret: string;
  previousSecretExpiresAt: string;
}

/**
 * Operator action: a new secret for the customer's client (its newest, the one onboarding issued), shown once. The
 * old one keeps working for `graceSeconds`, so the customer can deploy the new one without an outage.
 * `beforeCommit` sees the rotation inside its transaction (the operator's audit row commits with it).
 */
export async function rotateClientSecret(
  orm: Orm,
  customerId: string,
  graceSeconds: number,
  beforeCommit?: BeforeCommit<RotatedSecret>,
): Promise<RotatedSecret> {
  const clientSecret = `sec_${randomBytes(24).toString('base64url')}`;
  const secretHash = await hashSecret(clientSecret);
  return inTransaction(orm.em.fork(), async (em) => {
    const newest = { orderBy: { createdAt: 'desc' }, limit: 1, lockMode: LockMode.PESSIMISTIC_WRITE } as const;
    const [client] = await em.find(ApiClientSchema, { customerId }, newest);
    if (!client) throw new CambioError('NOT_FOUND', 'customer not found', { customerId });
    // A disabled customer's rotation keeps no secret it replaced: the disable may be for a leaked one, which would get
    // tokens again after the enable (decision 0330). Read after the client's lock, which a disable's update waits on.
    const disabled = !!(await em.findOne(CustomerSchema, { id: customerId }))?.disabledAt;
    const expiresAt = new Date(Date.now() + (disabled ? 0 : graceSeconds * 1000));
    // The secret the customer runs on is kept for the grace period: the current one, unless nobody has used it and
    // the one it replaced still works (a rotation whose secret was never printed, run again): then that one stays,
    // and the unused secret is the one replaced (decision 0229).
    const unusedRotation =
      !client.secretUsedAt && !!client.previousSecretHash && (client.previousSecretExpiresAt ?? 0) > new Date();
    if (disabled) client.previousSecretHash = null;
    else if (!unusedRotation) client.previousSecretHash = client.secretHash;
    client.previousSecretExpiresAt = expiresAt;
    client.secretHash = secretHash;
    client.secretUsedAt = null;
    const rotated = {
      customerId,
      clientId: client.clientId,
      clientSecret,
      previousSecretExpiresAt: expiresAt.toISOString(),
    };
    beforeCommit?.(rotated);
    return rotated;
  });
}

export interface IssuedToken {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
}

export async function issueToken(
  orm: Orm,
  config: Config,
  key: KeyPair,
  clientId: string,
  clientSecret: string,
): Promise<IssuedToken> {
  const em = orm.em.fork();
  const client = await em.findOne(ApiClientSchema, { clientId });
  // Same answer for an unknown client and a wrong secret: the caller learns nothing about which ids exist.
  const current = client ? await secretMatches(clientSecret, client.secretHash) : false;
  if (!client) await secretMatches(clientSecret, NO_CLIENT_HASH);
  if (!client || !(current || (await previousSecretMatches(clientSecret, client)))) {
    throw new CambioError('INVALID_CLIENT', 'unknown client or wrong secret');
  }
  // Taken before the transaction, whose read of the client again refreshes this entity.
  const matched = current ? client.secretHash : client.previousSecretHash;
  const firstUse = current && !client.secretUsedAt;
  // The customer is read under a share lock, and the token's `iat` taken while it is held: a disable committing
  // meanwhile is waited for (and refuses), and one that comes later takes its revocation moment after this token's
  // `iat`, so the token is revoked with the others (decision 0332).
  const accessToken = await inTransaction(em, async (tx) => {
    const customer = await tx.findOne(
      CustomerSchema,
      { id: client.customerId },
      { lockMode: LockMode.PESSIMISTIC_READ },
    );
    if (!customer || customer.disabledAt)
      throw new CambioError('INVALID_CLIENT', 'the customer of this client is disabled');
    // The secret checked is checked again under the client's share lock, which a rotation's update waits on: the check
    // above read the client before its scrypt (tens of ms, more in its queue), and a rotation, or a disable ending a
    // replaced secret's grace, that committed meanwhile must not give that secret a token (decision 0349).
    const fresh = await tx.findOne(
      ApiClientSchema,
      { clientId },
      { lockMode: LockMode.PESSIMISTIC_READ, refresh: true },
    );
    if (!fresh || !matched || !stillValid(fresh, matched))
      throw new CambioError('INVALID_CLIENT', 'unknown client or wrong secret');
    return jwt.sign({ client_id: clientId, iat: Math.floor(Date.now() / 1000) }, key.privateKey, {
      algorithm: 'RS256',
      keyid: key.kid,
      subject: client.customerId,
      issuer: config.jwtIssuer,
      audience: config.jwtAudience,
      expiresIn: TOKEN_LIFETIME_SECONDS,
      jwtid: randomUUID(),
    });
  });
  // The first token of a new secret tells a later rotation that the customer runs on it (decision 0229).
  if (firstUse && matched) await markSecretUsed(em, clientId, matched);
  return { accessToken, tokenType: 'Bearer', expiresIn: TOKEN_LIFETIME_SECONDS };
}

/**
 * The customer a valid token was issued to, and when (`iat`, seconds; 0 if the token has none, which any revocation
 * then covers). Algorithm, issuer and audience are pinned.
 */
export function verifyToken(config: Config, key: KeyPair, token: string, verified?: VerifiedTokens): VerifiedToken {
  const known = verified?.get(token);
  if (known !== undefined) return known;
  try {
    const claims = jwt.verify(token, key.publicKey, {
      algorithms: ['RS256'],
      issuer: config.jwtIssuer,
      audience: config.jwtAudience,
    });
    if (typeof claims === 'string' || typeof claims.sub !== 'string') throw new Error('no subject');
    // jsonwebtoken checks `exp` only when present; a token without one would never expire.
    if (typeof claims.exp !== 'number') throw new Error('no expiry');
    const found = { customerId: claims.sub, issuedAt: typeof claims.iat === 'number' ? claims.iat : 0 };
    verified?.remember(token, found, claims.exp);
    return found;
  } catch (err) {
    const expired = err instanceof jwt.TokenExpiredError;
    throw new CambioError('UNAUTHORIZED', expired ? 'access token expired' : 'invalid access token');
  }
}

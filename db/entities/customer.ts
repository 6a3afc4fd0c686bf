import { EntitySchema } from '@mikro-orm/core';
import { timestamp } from './common';

export interface Customer {
  id: string;
  name: string;
  createdAt: Date;
  /** Set by `cambio customer disable`: the customer's tokens stop working and no new ones are issued. */
  disabledAt?: Date | null;
  /** The moment of the last disable, kept after an enable: tokens issued until then never work again (0231). */
  tokensRevokedAt?: Date | null;
}

export const CustomerSchema = new EntitySchema<Customer>({
  name: 'Customer',
  tableName: 'customers',
  properties: {
    id: { type: 'uuid', primary: true },
    name: { type: 'string' },
    createdAt: { ...timestamp },
    disabledAt: { ...timestamp, nullable: true },
    tokensRevokedAt: { ...timestamp, nullable: true },
  },
});

/** OAuth client credentials; the secret is kept only as a scrypt hash. */
export interface ApiClient {
  clientId: string;
  customerId: string;
  secretHash: string;
  /** The secret a rotation replaced, accepted until `previousSecretExpiresAt`. */
  previousSecretHash?: string | null;
  previousSecretExpiresAt?: Date | null;
  /** When the current secret first got a token; null while nobody has used it (decision 0229). */
  secretUsedAt?: Date | null;
  createdAt: Date;
}

export const ApiClientSchema = new EntitySchema<ApiClient>({
  name: 'ApiClient',
  tableName: 'api_clients',
  properties: {
    clientId: { type: 'string', primary: true },
    customerId: { type: 'uuid', index: true },
    secretHash: { type: 'string' },
    previousSecretHash: { type: 'string', nullable: true },
    previousSecretExpiresAt: { ...timestamp, nullable: true },
    secretUsedAt: { ...timestamp, nullable: true },
    createdAt: { ...timestamp },
  },
});

/** The RS256 key pair that signs access tokens: generated once, kept here so every API instance shares it. */
export interface SigningKey {
  kid: string;
  privatePem: string;
  publicPem: string;
  createdAt: Date;
}

export const SigningKeySchema = new EntitySchema<SigningKey>({
  name: 'SigningKey',
  tableName: 'signing_keys',
  properties: {
    kid: { type: 'string', primary: true },
    privatePem: { type: 'text' },
    publicPem: { type: 'text' },
    createdAt: { ...timestamp },
  },
});

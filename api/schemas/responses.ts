// Response shapes for /openapi.json: `components.schemas`, referenced by the routes' `response.schema`. They
// describe what the presenters (presenters/) write; test/integration/openapi.test.ts validates real
// responses against them. Additional properties stay allowed: clients must ignore fields they do not know
// (spec, Versioning), so adding one is not a breaking change.
import { ASSETS } from '../../domain/assets';
import { RAILS } from '../../rails/funding';
import { PIX_RAIL } from '../../rails/pix/connector';
import { CRYPTO_RAIL } from '../../rails/crypto/connector';
import { RAIL_ENTRIES } from '../../rails/registry';
import { DOCUMENT_TYPES } from '../../domain/requirements';
import { ERROR_CODES } from '../../domain/errors';
import { INBOUND_PAYMENT_STATUSES } from '../../db/entities';

/** `{$ref}` to one of the components below. */
export const ref = (name: keyof typeof RESPONSE_SCHEMAS) => ({ $ref: `#/components/schemas/${name}` });

const uuid = { type: 'string', format: 'uuid' } as const;
const timestamp = { type: 'string', format: 'date-time' } as const;
const nullable = (schema: object) => ({ anyOf: [schema, { type: 'null' }] });
const object = (properties: Record<string, object>, required: string[] = Object.keys(properties)) => ({
  type: 'object',
  required,
  properties,
});

const Amount = object({
  value: {
    type: 'string',
    pattern: '^-?\\d+(\\.\\d+)?$',
    description: "Decimal string with exactly the asset's decimals",
  },
  asset: { type: 'string', enum: [...ASSETS] },
  decimals: { type: 'integer', enum: [2, 6] },
});
const Reason = object({ code: { type: 'string' }, message: { type: 'string' }, details: { type: 'object' } });
const StateEntry = object(
  { status: { type: 'string' }, createdAt: timestamp, reason: { $ref: '#/components/schemas/Reason' } },
  ['status', 'createdAt'],
);
const Tag = object({ key: { type: ['string', 'null'] }, value: { type: 'string' } });
const AccountReference = object({ id: uuid, owner: { type: 'string' } });
// `source` and `sourceTime` (beyond the spec, docs/decisions/0115): which rates priced the quote. Optional: an
// operation's snapshot written before they existed has neither.
const Rate = object(
  {
    value: { type: 'string' },
    base: { type: 'string' },
    quote: { type: 'string' },
    source: {
      type: ['string', 'null'],
      description:
        'The rate source that priced it: oxr, ptax, ecb (RATES_SOURCES), table (sandbox), peg (1:1, no market ' +
        'rate); null on quotes made before sources were recorded',
    },
    sourceTime: {
      type: ['string', 'null'],
      format: 'date-time',
      description: "The source's instant for the older leg; null for table, peg and older quotes",
    },
  },
  ['value', 'base', 'quote'],
);
// GET /api/rates (beyond the spec, ../shared/spec/decisions.md "Live exchange rates").
const Rates = object({
  base: { type: 'string', enum: [...ASSETS] },
  rates: {
    type: 'array',
    items: object({
      asset: { type: 'string', enum: [...ASSETS] },
      mid: { type: ['string', 'null'], description: 'Units of asset per 1 base at mid; null while refused' },
      source: { type: ['string', 'null'] },
      sourceTime: { type: ['string', 'null'], format: 'date-time' },
      unavailable: {
        type: ['string', 'null'],
        description: 'Why a new quote of this pair would be 503 RATES_UNAVAILABLE now; null when it prices',
      },
    }),
  },
});
const Address = object(
  {
    addressLine1: { type: 'string' },
    addressLine2: { type: 'string' },
    city: { type: 'string' },
    state: { type: 'string' },
    country: { type: 'string' },
    postalCode: { type: 'string' },
  },
  ['addressLine1', 'city', 'country', 'postalCode'],
);
const TaxId = object({ value: { type: 'string' }, type: { type: 'string', enum: ['CPF', 'CNPJ'] } });
const amountRef = { $ref: '#/components/schemas/Amount' };
const stateRef = { $ref: '#/components/schemas/StateEntry' };
const addressRef = { $ref: '#/components/schemas/Address' };
const taxIdRef = { $ref: '#/components/schemas/TaxId' };

const Ubo = object({
  id: uuid,
  name: { type: 'string' },
  taxId: taxIdRef,
  address: addressRef,
  currentState: stateRef,
  ownershipPercentage: { type: ['number', 'null'] },
});

const requirement = object(
  {
    type: { const: 'DOCUMENT' },
    documentType: { type: 'string', enum: [...DOCUMENT_TYPES] },
    documentSubType: { type: ['string', 'null'] },
    group: { type: ['string', 'null'] },
    options: { type: 'array', items: { type: 'string' } },
    uboId: { type: ['string', 'null'] },
    requiredMetadata: { type: 'array', items: { type: 'string' } },
    metadata: { type: 'object' },
    reason: nullable({ type: 'object' }),
  },
  ['type', 'documentType'],
);
const requirementList = { type: 'array', items: requirement };

const Account = object({
  id: uuid,
  customer: object({ id: uuid }),
  owner: object({
    type: { const: 'COMPANY' },
    legalName: { type: 'string' },
    taxId: taxIdRef,
    industry: { type: 'string' },
    incorporateDate: { type: 'string', format: 'date' },
    address: addressRef,
    ubos: { type: 'array', items: { $ref: '#/components/schemas/Ubo' } },
  }),
  assets: {
    type: 'array',
    items: object({
      asset: { type: 'string', enum: [...ASSETS] },
      allowsVirtualAccounts: { type: 'boolean' },
      status: { type: 'string' },
    }),
  },
  requirements: object({
    currentlyDue: requirementList,
    pendingVerification: requirementList,
    errors: requirementList,
    satisfied: requirementList,
  }),
  tags: { type: 'array', items: { $ref: '#/components/schemas/Tag' } },
  currentState: stateRef,
  states: { type: 'array', items: stateRef },
  createdAt: timestamp,
  updatedAt: timestamp,
  sourceAccountId: { type: ['string', 'null'] },
});

const Document = object({
  id: uuid,
  documentType: { type: 'string', enum: [...DOCUMENT_TYPES] },
  uboId: { type: ['string', 'null'] },
  fileName: { type: 'string' },
  contentType: { type: 'string' },
  size: { type: 'integer' },
  status: { type: 'string' },
  createdAt: timestamp,
});

const Balances = object({
  accountId: uuid,
  balances: {
    type: 'array',
    items: object({
      asset: { type: 'string', enum: [...ASSETS] },
      available: amountRef,
      held: amountRef,
      total: amountRef,
    }),
  },
});

const Quote = object({
  id: uuid,
  customerId: uuid,
  account: { $ref: '#/components/schemas/AccountReference' },
  sourceAmount: amountRef,
  targetAmount: amountRef,
  effectiveRate: { $ref: '#/components/schemas/Rate' },
  expiresAt: timestamp,
});

/**
 * The intent fields of a DEPOSIT, TRANSFER and SWAP, the same on the operation and in its events (a WITHDRAWAL's
 * `beneficiary` differs between the two).
 */
export const OPERATION_INTENT_PROPERTIES = {
  fundingInstruction: {
    type: 'object',
    required: ['rail'],
    // Each rail's fields are its folder's (rails/registry.ts).
    description: `Where and how the payer pays. ${RAIL_ENTRIES.map((e) => e.instruction.summary).join('; ')}.`,
    properties: Object.assign(
      { rail: { type: 'string', enum: [...RAILS] } },
      ...RAIL_ENTRIES.map((e) => e.instruction.properties),
    ) as Record<string, object>,
  },
  inboundPaymentId: {
    type: 'string',
    format: 'uuid',
    description:
      'A DEPOSIT an operator credited from an unmatched inbound payment (`cambio payment credit`): that payment',
  },
  targetAccount: { $ref: '#/components/schemas/AccountReference' },
  sourceAsset: { type: 'string' },
  targetAsset: { type: 'string' },
};

const intent = {
  type: 'object',
  required: ['type'],
  description:
    'Discriminated by `type`: DEPOSIT carries `fundingInstruction` (and `inboundPaymentId` when an operator ' +
    'credited it from a payment), WITHDRAWAL `beneficiary`, TRANSFER `targetAccount`, SWAP `sourceAsset` and ' +
    '`targetAsset`.',
  properties: {
    type: { type: 'string', enum: ['DEPOSIT', 'WITHDRAWAL', 'SWAP', 'TRANSFER'] },
    ...OPERATION_INTENT_PROPERTIES,
    beneficiary: { type: 'object' },
  },
};

const Operation = object({
  id: uuid,
  customerId: uuid,
  account: { $ref: '#/components/schemas/AccountReference' },
  sourceAmount: amountRef,
  targetAmount: amountRef,
  intent,
  quote: object({
    id: uuid,
    effectiveRate: { $ref: '#/components/schemas/Rate' },
    expiresAt: timestamp,
    consumedAt: { type: ['string', 'null'], format: 'date-time' },
  }),
  fees: { type: 'array', items: object({ amount: amountRef, source: { type: 'string' }, createdAt: timestamp }) },
  transactions: {
    type: 'array',
    items: object({
      id: { type: 'string' },
      direction: { type: 'string', enum: ['CREDIT', 'DEBIT'] },
      amount: amountRef,
      status: { type: 'string' },
    }),
  },
  currentState: stateRef,
  states: { type: 'array', items: stateRef },
  tags: { type: 'array', items: { $ref: '#/components/schemas/Tag' } },
  createdAt: timestamp,
  updatedAt: timestamp,
});

const holder = {
  type: 'object',
  required: ['type'],
  description:
    'INDIVIDUAL: firstName, lastName, taxId (CPF), dateOfBirth, address. COMPANY: legalName, taxId (CNPJ), address.',
  properties: {
    type: { type: 'string', enum: ['INDIVIDUAL', 'COMPANY'] },
    firstName: { type: 'string' },
    lastName: { type: 'string' },
    legalName: { type: 'string' },
    taxId: taxIdRef,
    dateOfBirth: { type: 'string', format: 'date' },
    address: addressRef,
  },
};
const beneficiaryFields = {
  id: uuid,
  customerId: uuid,
  holder,
  relationshipType: { type: 'string', enum: ['SELF_OWNED', 'THIRD_PARTY'] },
  createdAt: timestamp,
  updatedAt: timestamp,
};
const Beneficiary = object({
  ...beneficiaryFields,
  paymentInstructions: {
    type: 'array',
    items: object({
      id: uuid,
      asset: { type: 'string' },
      currentState: stateRef,
      address: {
        oneOf: [
          object({ rail: { const: PIX_RAIL }, dictKeyType: { type: 'string' }, dictKey: { type: 'string' } }),
          object({
            rail: { const: CRYPTO_RAIL },
            type: { const: 'WALLET' },
            network: { type: 'string' },
            address: { type: 'string', description: 'EIP-55 checksummed' },
          }),
        ],
      },
      createdAt: timestamp,
    }),
  },
});
const BeneficiarySummary = object({ ...beneficiaryFields, instructionCount: { type: 'integer' } });

const Token = object({
  accessToken: { type: 'string' },
  tokenType: { const: 'Bearer' },
  expiresIn: { type: 'integer' },
});

const InboundPayment = object(
  {
    id: uuid,
    customerId: { ...nullable(uuid), description: "Null: nobody could attribute it (the platform's suspense)" },
    operationId: { ...nullable(uuid), description: 'The deposit it arrived for (a fact: never changes)' },
    accountId: { ...nullable(uuid), description: "The deposit's account (a fact)" },
    amount: { $ref: '#/components/schemas/Amount', description: 'The amount received (a fact: never changes)' },
    rail: { type: 'string', enum: [...RAILS] },
    endToEndId: {
      type: 'string',
      description: 'The rail reference: one payment per rail and reference, across customers',
    },
    status: {
      type: 'string',
      enum: [...INBOUND_PAYMENT_STATUSES],
      description:
        'PENDING (CRYPTO): seen on the chain, fewer than EVM_CONFIRMATIONS blocks deep, in no balance; DROPPED ' +
        '(CRYPTO): its block left the chain before it was confirmed, never credited; ' +
        'RECEIVED: recorded, not decided yet; MATCHED: counts toward its deposit; UNMATCHED: in the suspense; ' +
        'RETURNING: a return in flight; RETURNED; CREDITED: by an operator',
    },
    chain: {
      ...nullable(
        object(
          {
            confirmations: { type: 'integer', description: "Blocks on top of the transfer's, its own included" },
            blockNumber: { type: 'string', description: 'The block the transfer is in (a decimal string)' },
            blockHash: { type: 'string' },
            tokenUnits: { type: 'string', description: "What was sent, in the token's own units (exact)" },
          },
          ['confirmations', 'blockNumber', 'blockHash', 'tokenUnits'],
        ),
      ),
      description: 'CRYPTO: where on the chain the transfer is, and how deep; null on other rails',
    },
    remainderOf: { ...nullable(uuid), description: "An overpayment's excess: the matched record it was split from" },
    payer: {
      ...nullable(
        object({
          taxId: { type: 'string', description: 'CNPJ or CPF, digits' },
          personType: { type: 'string', enum: ['INDIVIDUAL', 'COMPANY'] },
          bankCode: { type: 'string' },
          branchCode: { type: 'string' },
          accountNumber: { type: 'string' },
          accountDigit: { type: 'string' },
        }),
      ),
      description: "Who sent it, as the rail's record shows (TED: the sending account); null when it names none",
    },
    matchedAmount: {
      ...nullable({ $ref: '#/components/schemas/Amount' }),
      description: 'MATCHED: what its deposit used, when less than received (the rest is a remainder record)',
    },
    credit: {
      ...nullable(object({ operationId: uuid, accountId: uuid }, ['operationId', 'accountId'])),
      description: "CREDITED: the DEPOSIT an operator's credit created, and its account",
    },
    returned: nullable(
      object({
        endToEndId: {
          type: ['string', 'null'],
          description: 'Of the money sent back; null when the rail refused the return before giving one',
        },
        reason: { type: ['string', 'null'] },
        failure: { type: ['string', 'null'], description: 'Why the rail refused the last return' },
      }),
    ),
    createdAt: timestamp,
    updatedAt: timestamp,
  },
  ['id', 'customerId', 'operationId', 'accountId', 'amount', 'rail', 'endToEndId', 'status', 'createdAt', 'updatedAt'],
);

const PageMeta = object({
  previousCursor: { type: ['string', 'null'] },
  nextCursor: { type: ['string', 'null'] },
  total: { type: 'integer' },
});

const Error = {
  ...object({
    code: { type: 'string', description: 'UPPER_SNAKE error code', examples: [...ERROR_CODES] },
    message: { type: 'string', description: 'Human-readable; not for matching' },
    details: {
      type: 'object',
      description: 'VALIDATION_ERROR: `errors` = [{path, message}] (JSON pointers); others: code-specific',
    },
  }),
  additionalProperties: false,
};

export const RESPONSE_SCHEMAS = {
  Error,
  Amount,
  Reason,
  StateEntry,
  Tag,
  AccountReference,
  Rate,
  Rates,
  Address,
  TaxId,
  Ubo,
  Account,
  Document,
  Balances,
  Quote,
  Operation,
  Beneficiary,
  BeneficiarySummary,
  Token,
  PageMeta,
  InboundPayment,
};

/** A list response of the spec's list conventions: `{data: [item], meta}`. */
export const pageOf = (item: keyof typeof RESPONSE_SCHEMAS) =>
  object({ data: { type: 'array', items: ref(item) }, meta: ref('PageMeta') });

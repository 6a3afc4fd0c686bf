// The event catalogue as OpenAPI 3.1: the payload schemas of the webhook deliveries (webhooks/*-event.ts build them),
// the `webhooks` section of /openapi.json (one entry per event type, with the delivery headers), and the
// events API's shapes. test/integration/webhook-catalog.test.ts validates real delivery bodies against them.
import { ASSETS } from '../../domain/assets';
import { EVENT_TYPES, EVENT_TYPES_BY_RESOURCE, EventResource, EventType } from '../../webhooks/event-types';
import { OPERATION_INTENT_PROPERTIES } from './responses';

const uuid = { type: 'string', format: 'uuid' } as const;
const timestamp = { type: 'string', format: 'date-time' } as const;
const component = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const object = (properties: Record<string, object>, required: string[] = Object.keys(properties)) => ({
  type: 'object',
  required,
  properties,
});

const pixAddress = object({
  type: { type: 'string', const: 'PIX' },
  rail: { type: 'string' },
  keyType: { type: 'string', enum: ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'EVP'] },
  key: { type: 'string' },
});

// Beyond the spec (decision 0134): a WALLET instruction is shown as the API shows it, its chain and its address.
// `network` is absent only from the events of a withdrawal recorded before its intent named the chain.
const walletAddress = object(
  {
    type: { type: 'string', const: 'WALLET' },
    rail: { type: 'string', description: 'the rail that pays WALLET instructions' },
    network: { type: 'string' },
    address: { type: 'string', description: 'EIP-55 checksummed' },
  },
  ['type', 'rail', 'address'],
);

/** Where an instruction pays: a PIX key, or a WALLET (told apart by `type`). */
const instructionAddress = { oneOf: [pixAddress, walletAddress] };

const OperationEvent = {
  ...object({
    id: uuid,
    customerId: uuid,
    account: component('AccountReference'),
    sourceAmount: component('Amount'),
    destinationAmount: component('Amount'),
    intent: {
      type: 'object',
      required: ['type'],
      description:
        'Discriminated by `type`. WITHDRAWAL: `beneficiary` with `holder` (`name`, `taxId` as a plain string, ' +
        '`address`) and `instruction.address` (`type` PIX: `rail`, `keyType`, `key`; `type` WALLET: `rail`, ' +
        '`network`, `address`); the others as on the operation.',
      properties: {
        type: { type: 'string', enum: ['DEPOSIT', 'WITHDRAWAL', 'SWAP', 'TRANSFER'] },
        ...OPERATION_INTENT_PROPERTIES,
        beneficiary: object({
          id: uuid,
          holder: object({ name: { type: 'string' }, taxId: { type: 'string' }, address: component('Address') }),
          instruction: object({ id: uuid, address: instructionAddress }),
        }),
      },
    },
    fees: {
      type: 'array',
      items: object(
        {
          type: { type: 'string', enum: ['PERCENTAGE', 'ABSOLUTE'] },
          amount: component('Amount'),
          source: { type: 'string' },
          percentage: {
            type: 'string',
            description:
              'Decimal string, for PERCENTAGE fees: a fraction of the source amount ("0.005" for a 50 bps spread)',
          },
        },
        ['type', 'amount', 'source'],
      ),
    },
    transactions: {
      type: 'array',
      items: object({
        type: { type: 'string', description: 'PIX, or the rail (TED, BOLETO, CRYPTO)' },
        direction: { type: 'string', enum: ['CREDIT', 'DEBIT'] },
        amount: component('Amount'),
        currentState: object({ status: { type: 'string' }, createdAt: timestamp, reason: { type: 'string' } }, [
          'status',
          'createdAt',
        ]),
        endToEnd: { type: 'string' },
      }),
    },
    currentState: component('StateEntry'),
    atTime: { ...timestamp, description: 'When the transition happened' },
    quote: {
      anyOf: [object({ id: uuid, effectiveRate: component('Rate'), expiresAt: timestamp }), { type: 'null' }],
      description: 'null for same-asset operations',
    },
    tags: { type: 'array', items: component('Tag') },
  }),
  description:
    'OPERATION_REQUESTED, OPERATION_COMPLETED and OPERATION_FAILED share it; `currentState.status` says which.',
};

const BeneficiaryInstructionEvent = {
  ...object({
    customerId: uuid,
    beneficiaryId: uuid,
    holder: {
      type: 'object',
      required: ['type', 'taxId', 'address'],
      description: 'INDIVIDUAL: firstName, lastName, dateOfBirth; COMPANY: legalName. `taxId` is the plain value.',
      properties: {
        type: { type: 'string', enum: ['INDIVIDUAL', 'COMPANY'] },
        firstName: { type: 'string' },
        lastName: { type: 'string' },
        legalName: { type: 'string' },
        taxId: { type: 'string' },
        dateOfBirth: { type: 'string', format: 'date' },
        address: component('Address'),
      },
    },
    relationshipType: { type: 'string', enum: ['SELF_OWNED', 'THIRD_PARTY'] },
    instruction: object({
      id: uuid,
      asset: { type: 'string', enum: [...ASSETS] },
      currentState: component('StateEntry'),
      address: instructionAddress,
    }),
    atTime: { ...timestamp, description: 'When the transition happened' },
  }),
  description: 'The affected payment instruction only; read the beneficiary for all of them.',
};

const AssetActivatedEvent = {
  ...object({
    customerId: uuid,
    accountId: uuid,
    asset: { type: 'string', enum: [...ASSETS] },
    status: { type: 'string', const: 'ACTIVE' },
    atTime: { ...timestamp, description: 'When the asset became usable' },
  }),
  description: 'An asset of an account became usable.',
};

const statementAmount = object({
  value: { type: 'string' },
  asset: { type: 'string', enum: [...ASSETS] },
  decimals: { type: 'integer' },
});

const StatementIssuedEvent = {
  ...object({
    customerId: uuid,
    statementId: uuid,
    accountId: uuid,
    asset: { type: 'string', enum: [...ASSETS] },
    periodStart: { ...timestamp, description: 'Inclusive' },
    periodEnd: { ...timestamp, description: 'Exclusive' },
    openingBalance: statementAmount,
    closingBalance: statementAmount,
    sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the JSON form, hex' },
  }),
  description: "A closed period's statement was issued; read it with GET /api/statements/{statementId}.",
};

/** Components the webhooks section and the events API refer to (merged into `components.schemas`). */
export const EVENT_PAYLOAD_SCHEMAS = {
  OperationEvent,
  BeneficiaryInstructionEvent,
  AssetActivatedEvent,
  StatementIssuedEvent,
};

const PAYLOAD_OF: Record<EventResource, keyof typeof EVENT_PAYLOAD_SCHEMAS> = {
  OPERATION: 'OperationEvent',
  BENEFICIARY: 'BeneficiaryInstructionEvent',
  ASSET: 'AssetActivatedEvent',
  STATEMENT: 'StatementIssuedEvent',
};

/** The payload component of an event type. */
export function payloadSchemaName(type: EventType): keyof typeof EVENT_PAYLOAD_SCHEMAS {
  const resource = (Object.keys(EVENT_TYPES_BY_RESOURCE) as EventResource[]).find((r) =>
    (EVENT_TYPES_BY_RESOURCE[r] as readonly string[]).includes(type),
  )!;
  return PAYLOAD_OF[resource];
}

const WHEN: Record<EventType, string> = {
  OPERATION_REQUESTED: 'A deposit, withdrawal or swap was created.',
  OPERATION_COMPLETED: 'An operation (transfers included) reached COMPLETED.',
  OPERATION_FAILED: 'An operation reached FAILED; `currentState.reason` says why.',
  BENEFICIARY_PAYMENT_INSTRUCTION_CREATED: 'A payment instruction was created on a beneficiary.',
  BENEFICIARY_PAYMENT_INSTRUCTION_APPROVED: 'A payment instruction was approved.',
  BENEFICIARY_PAYMENT_INSTRUCTION_REJECTED: 'A payment instruction was rejected.',
  ASSET_ACTIVATED: 'An asset of an account was activated.',
  STATEMENT_ISSUED: 'A statement of a closed period was issued (one per account and enabled asset).',
};

const DELIVERY = `
Delivered by POST to each ACTIVE subscription to this type, the body being the payload as JSON (no envelope).
Any 2xx acknowledges it; anything else, a timeout (WEBHOOK_TIMEOUT_SECONDS) or a redirect is a failure, retried
on the schedule when the subscription has \`allowRetry\`. Every attempt of one delivery carries the same
\`webhook-id\` and body: deduplicate on it. Verify \`webhook-signature\` (Standard Webhooks) with the
subscription's secret. The same payload is readable for 30 days through \`GET /api/events/{eventId}\`.
`.trim();

function deliveryHeaders(type: EventType) {
  const header = (name: string, description: string, schema: object) => ({
    name,
    in: 'header',
    required: true,
    description,
    schema,
  });
  return [
    header('X-Event-Type', 'The event type', { type: 'string', const: type }),
    header('X-Message-Id', 'Id of this delivery (one event to one subscription), the same on every attempt', {
      type: 'string',
    }),
    header('webhook-id', 'Standard Webhooks: the same value as X-Message-Id', { type: 'string' }),
    header('webhook-timestamp', 'Standard Webhooks: Unix seconds when this attempt was signed', {
      type: 'string',
      pattern: '^\\d+$',
    }),
    header(
      'webhook-signature',
      'Standard Webhooks: space-separated `v1,<base64 HMAC-SHA256 of {webhook-id}.{webhook-timestamp}.{body}>`, ' +
        'one per live secret (two for 24 h after a rotation, the new one first)',
      { type: 'string' },
    ),
  ];
}

/** The OpenAPI 3.1 `webhooks` section: one entry per event type. */
export function webhooksSection(): Record<string, unknown> {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `webhook${type.toLowerCase().replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase())}`,
          summary: WHEN[type],
          description: DELIVERY,
          tags: ['Webhook events'],
          security: [],
          parameters: deliveryHeaders(type),
          requestBody: {
            required: true,
            content: { 'application/json': { schema: component(payloadSchemaName(type)) } },
          },
          responses: {
            '2XX': { description: 'Acknowledged: the delivery is SUCCESS' },
            '4XX': {
              description: 'A failure: retried when the subscription has allowRetry (429 and 503 honour Retry-After)',
            },
            '5XX': { description: 'A failure: retried when the subscription has allowRetry' },
          },
        },
      },
    ]),
  );
}

// The events API (GET /api/events, GET /api/events/{eventId}).
export const eventResponse = {
  type: 'object',
  required: ['id', 'type', 'createdAt', 'payload'],
  properties: {
    id: { ...uuid, description: 'Per event (X-Message-Id is per delivery)' },
    type: { type: 'string', enum: [...EVENT_TYPES] },
    createdAt: timestamp,
    payload: {
      description: 'Exactly the body the deliveries of this event carry',
      anyOf: Object.keys(EVENT_PAYLOAD_SCHEMAS).map(component),
    },
  },
};

const meta = component('PageMeta');
export const eventListResponse = {
  type: 'object',
  required: ['data', 'meta'],
  properties: { data: { type: 'array', items: eventResponse }, meta },
};

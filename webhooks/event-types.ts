// The event catalogue (decision 0025): each resource a subscription can name, with its events.
export const EVENT_TYPES_BY_RESOURCE = {
  OPERATION: ['OPERATION_REQUESTED', 'OPERATION_COMPLETED', 'OPERATION_FAILED'],
  BENEFICIARY: [
    'BENEFICIARY_PAYMENT_INSTRUCTION_CREATED',
    'BENEFICIARY_PAYMENT_INSTRUCTION_APPROVED',
    'BENEFICIARY_PAYMENT_INSTRUCTION_REJECTED',
  ],
  ASSET: ['ASSET_ACTIVATED'],
  STATEMENT: ['STATEMENT_ISSUED'],
} as const;

export type EventResource = keyof typeof EVENT_TYPES_BY_RESOURCE;
export type EventType = (typeof EVENT_TYPES_BY_RESOURCE)[EventResource][number];

export const EVENT_RESOURCES = Object.keys(EVENT_TYPES_BY_RESOURCE) as EventResource[];
export const EVENT_TYPES = Object.values(EVENT_TYPES_BY_RESOURCE).flat() as EventType[];

/** One subscription entry: a resource and the events of it that are wanted. */
export interface ResourceEvents {
  name: EventResource;
  events: EventType[];
}

/** Every resource with all its events: what `includeAll: true` subscribes to. */
export const allResources = (): ResourceEvents[] =>
  EVENT_RESOURCES.map((name) => ({ name, events: [...EVENT_TYPES_BY_RESOURCE[name]] as EventType[] }));

import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// Operators filter the Temporal UI by these (../shared/spec/decisions.md, "Operators"). The start command registers
// them on the dev server it launches (`--search-attribute`) and on an external server through the operator service.
export const customerIdKey = defineSearchAttributeKey('CustomerId', SearchAttributeType.KEYWORD);
export const operationStatusKey = defineSearchAttributeKey('OperationStatus', SearchAttributeType.KEYWORD);

/** Name → Temporal CLI type, for `temporal server start-dev --search-attribute Name=Keyword`. */
export const SEARCH_ATTRIBUTES: Record<string, 'Keyword'> = {
  CustomerId: 'Keyword',
  OperationType: 'Keyword',
  OperationStatus: 'Keyword',
};

export * from './common';
export * from './customer';
export * from './account';
export * from './quote';
export * from './operation';
export * from './inbound-payment';
export * from './ledger';
export * from './beneficiary';
export * from './platform';
export * from './webhook';
export * from './movement';
export * from './statement';

import { AccountDocumentSchema, AccountSchema, UboSchema } from './account';
import { BeneficiarySchema, PaymentInstructionSchema } from './beneficiary';
import { ApiClientSchema, CustomerSchema, SigningKeySchema } from './customer';
import { BalanceSchema, LedgerEntrySchema, LedgerTransactionSchema } from './ledger';
import { InboundPaymentSchema } from './inbound-payment';
import { OperationSchema } from './operation';
import { MovementDaySchema, MovementSchema } from './movement';
import { DomainEventSchema, IdempotencyRecordSchema, WorkflowStartSchema } from './platform';
import { QuoteSchema } from './quote';
import { IssuedStatementSchema } from './statement';
import { ExecutionLogSchema, WebhookAttemptSchema, WebhookSubscriptionSchema } from './webhook';

export const ALL_ENTITIES = [
  CustomerSchema,
  ApiClientSchema,
  SigningKeySchema,
  AccountSchema,
  UboSchema,
  AccountDocumentSchema,
  QuoteSchema,
  OperationSchema,
  InboundPaymentSchema,
  LedgerTransactionSchema,
  LedgerEntrySchema,
  BalanceSchema,
  BeneficiarySchema,
  PaymentInstructionSchema,
  DomainEventSchema,
  WorkflowStartSchema,
  IdempotencyRecordSchema,
  WebhookSubscriptionSchema,
  IssuedStatementSchema,
  ExecutionLogSchema,
  WebhookAttemptSchema,
  MovementSchema,
  MovementDaySchema,
];

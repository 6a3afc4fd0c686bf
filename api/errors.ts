import type { CambioError, ErrorCode } from '../domain/errors';

// The only place a code becomes an HTTP status (decisions 0001, 0032, 0064).
const STATUS: Record<ErrorCode, number> = {
  VALIDATION_ERROR: 400,
  INVALID_AMOUNT_PRECISION: 400,
  INVALID_AMOUNT: 400,
  INLINE_BENEFICIARY_NOT_SUPPORTED: 400,
  INVALID_FILTER: 400,
  INVALID_CURSOR: 400,
  INVALID_PERIOD: 400,
  MISSING_IDEMPOTENCY_KEY: 400,
  UNAUTHORIZED: 401,
  INVALID_CLIENT: 401,
  NOT_FOUND: 404,
  // A path some route serves, with a method none declares (api/middleware/method-not-allowed.ts): with `Allow`.
  METHOD_NOT_ALLOWED: 405,
  IDEMPOTENCY_KEY_IN_USE: 409,
  QUOTE_ALREADY_CONSUMED: 409,
  INVALID_STATE: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  QUOTE_EXPIRED: 422,
  QUOTE_NOT_FOUND: 422,
  QUOTE_ACCOUNT_MISMATCH: 422,
  INSUFFICIENT_FUNDS: 422,
  ACCOUNT_NOT_ACTIVE: 422,
  ASSET_NOT_ENABLED: 422,
  SAME_ACCOUNT_TRANSFER: 422,
  RAIL_ASSET_MISMATCH: 422,
  RAIL_NOT_CONFIGURED: 422,
  RAIL_REJECTED: 422,
  // A PSP notice with items the PSP's own record does not confirm (decision 0107): those are not recorded.
  NOTICE_NOT_CONFIRMED: 422,
  // A representation the resource has no valid form in (a stablecoin statement as camt.053): details name the others.
  FORMAT_NOT_SUPPORTED: 422,
  PAYMENT_INSTRUCTION_NOT_APPROVED: 422,
  REQUIREMENTS_NOT_MET: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  // Answered by api/client-error.ts for requests Node's HTTP parser refuses before Koa sees them.
  MALFORMED_REQUEST: 400,
  REQUEST_TIMEOUT: 408,
  HEADERS_TOO_LARGE: 431,
  INVALID_WEBHOOK_URL: 400,
  DELIVERY_IN_PROGRESS: 409,
  SUBSCRIPTION_DISABLED: 409,
  // The customer has WEBHOOK_SUBSCRIPTIONS_MAX live subscriptions (decision 0258): delete one first.
  SUBSCRIPTION_LIMIT_REACHED: 422,
  // The customer has PAYMENT_INSTRUCTIONS_PENDING_MAX instructions waiting for review (decision 0316).
  PAYMENT_INSTRUCTION_LIMIT_REACHED: 422,
  // The customer's documents would pass DOCUMENT_STORAGE_PER_CUSTOMER_MB (decision 0350).
  DOCUMENT_STORAGE_LIMIT_REACHED: 422,
  // Another customer's payment already has this rail reference; whose is not said.
  RAIL_REFERENCE_IN_USE: 409,
  // Postgres or Temporal could not be reached or gave up (see `dependencyFailure`): retry with the same key.
  SERVICE_UNAVAILABLE: 503,
  // No fresh market rate for a leg of a new quote (decision 0116): retry after the poll.
  RATES_UNAVAILABLE: 503,
  INTERNAL_ERROR: 500,
};

export const statusOf = (code: ErrorCode): number => STATUS[code];

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
}

export const errorBody = (err: CambioError): ErrorBody => ({
  code: err.code,
  message: err.message,
  details: err.details,
});

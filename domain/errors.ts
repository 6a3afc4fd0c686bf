// Every business failure is a CambioError carrying a code the spec or a decision in docs/decisions/ names.
// api/errors.ts is the only place a code becomes an HTTP status; activities turn it into a
// non-retryable ApplicationFailure whose `type` is the code.
export const ERROR_CODES = [
  'VALIDATION_ERROR',
  'INVALID_AMOUNT_PRECISION',
  'INVALID_AMOUNT',
  'INLINE_BENEFICIARY_NOT_SUPPORTED',
  'INVALID_FILTER',
  'INVALID_CURSOR',
  'INVALID_PERIOD',
  'MISSING_IDEMPOTENCY_KEY',
  'UNAUTHORIZED',
  'INVALID_CLIENT',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'IDEMPOTENCY_KEY_IN_USE',
  'QUOTE_ALREADY_CONSUMED',
  'QUOTE_EXPIRED',
  'QUOTE_NOT_FOUND',
  'QUOTE_ACCOUNT_MISMATCH',
  'INSUFFICIENT_FUNDS',
  'ACCOUNT_NOT_ACTIVE',
  'ASSET_NOT_ENABLED',
  'SAME_ACCOUNT_TRANSFER',
  'RAIL_ASSET_MISMATCH',
  'RAIL_NOT_CONFIGURED',
  'RAIL_REJECTED',
  'NOTICE_NOT_CONFIRMED',
  'FORMAT_NOT_SUPPORTED',
  'PAYMENT_INSTRUCTION_NOT_APPROVED',
  'REQUIREMENTS_NOT_MET',
  'IDEMPOTENCY_KEY_REUSED',
  'INVALID_STATE',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'RATE_LIMITED',
  'MALFORMED_REQUEST',
  'REQUEST_TIMEOUT',
  'HEADERS_TOO_LARGE',
  'INVALID_WEBHOOK_URL',
  'DELIVERY_IN_PROGRESS',
  'SUBSCRIPTION_DISABLED',
  'SUBSCRIPTION_LIMIT_REACHED',
  'PAYMENT_INSTRUCTION_LIMIT_REACHED',
  'DOCUMENT_STORAGE_LIMIT_REACHED',
  'RAIL_REFERENCE_IN_USE',
  'SERVICE_UNAVAILABLE',
  'RATES_UNAVAILABLE',
  'INTERNAL_ERROR',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class CambioError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'CambioError';
  }
}

export const notFound = (what: string) => new CambioError('NOT_FOUND', `${what} not found`);

export const validationError = (path: string, message: string) =>
  new CambioError('VALIDATION_ERROR', `${path} ${message}`, { errors: [{ path, message }] });

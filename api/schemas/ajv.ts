import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { CambioError } from '../../domain/errors';
import { withinAmountBounds } from '../../domain/money';
import { findUnsafeText } from './hygiene';
import { UUID_RE } from '../../domain/uuid';

// Bodies are validated strictly (no coercion, no unknown properties); query strings arrive as strings, so
// their validator coerces `limit=10` to a number and nothing else.
// `verbose` puts the failing schema on each error, so `describe` can say what a oneOf asks for in the API's words.
const bodyAjv = withCambioFormats(
  new Ajv({
    strict: true,
    strictRequired: false,
    allErrors: true,
    verbose: true,
    coerceTypes: false,
    useDefaults: false,
  }),
);
const queryAjv = withCambioFormats(
  new Ajv({
    strict: true,
    strictRequired: false,
    allErrors: true,
    verbose: true,
    coerceTypes: true,
    useDefaults: true,
  }),
);

/**
 * The standard formats (date with formatMinimum/formatMaximum included) plus `amount`: an AmountValue whose
 * magnitude the numeric(38,6) columns, their sums and the rate arithmetic can hold (domain/money.ts). Its
 * failure is reported as INVALID_AMOUNT, not VALIDATION_ERROR; the syntax itself is the schema's `pattern`.
 * `uuid` is the project's (domain/uuid.ts), not ajv-formats': that one also takes the `urn:uuid:` form, which
 * Postgres cannot read as a uuid, so such an id in a path or a body was a 500 instead of a 400.
 */
function withCambioFormats(ajv: Ajv): Ajv {
  addFormats(ajv);
  ajv.addFormat('uuid', UUID_RE);
  ajv.addFormat('amount', { type: 'string', validate: withinAmountBounds });
  return ajv;
}

const cache = new WeakMap<object, ValidateFunction>();

function compile(ajv: Ajv, schema: object): ValidateFunction {
  let fn = cache.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    cache.set(schema, fn);
  }
  return fn;
}

const isAmountError = (e: ErrorObject) =>
  e.keyword === 'format' && (e.params as { format?: string }).format === 'amount';

/** The names a oneOf of `{ required: [name] }` branches asks exactly one of (the quote's amounts), if it is one. */
function exactlyOneOf(e: ErrorObject): string[] | undefined {
  if (e.keyword !== 'oneOf' || !Array.isArray(e.schema)) return undefined;
  const names = (e.schema as Array<{ required?: unknown }>).map((branch) =>
    Object.keys(branch).length === 1 && Array.isArray(branch.required) && branch.required.length === 1
      ? String(branch.required[0])
      : undefined,
  );
  return names.every((n) => n !== undefined) ? (names as string[]) : undefined;
}

/**
 * Ajv's errors in the API's words. Its combinators report themselves as well as what failed inside them (`must match
 * "else" schema`, `must match exactly one schema in oneOf`, `must be equal to constant`): a client cannot act on the
 * schema's structure, so the wrapper of an if/then/else goes (the branch's own errors are listed), a oneOf of
 * required names becomes the rule it stands for, and a const names its value.
 */
function describe(errors: ErrorObject[] | null | undefined, prefix: string) {
  const all = errors ?? [];
  const rules = all.filter((e) => exactlyOneOf(e));
  // A branch's `is required` for a name its oneOf already covers repeats the rule in worse words.
  const coveredByRule = (e: ErrorObject) =>
    e.keyword === 'required' &&
    rules.some(
      (rule) =>
        rule.instancePath === e.instancePath &&
        exactlyOneOf(rule)!.includes((e.params as { missingProperty: string }).missingProperty),
    );
  const kept = all.filter((e) => e.keyword !== 'if' && !coveredByRule(e));
  // The rule first: it is what the client most needs to read in the message.
  kept.sort((x, y) => Number(rules.includes(y)) - Number(rules.includes(x)));
  return kept.map((e) => {
    let path = `${prefix}${e.instancePath}`;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      path = `${path}/${(e.params as { additionalProperty: string }).additionalProperty}`;
      message = 'is not allowed';
    } else if (e.keyword === 'required') {
      path = `${path}/${(e.params as { missingProperty: string }).missingProperty}`;
      message = 'is required';
    } else if (e.keyword === 'enum') {
      message = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    } else if (e.keyword === 'const') {
      message = `must be ${String((e.params as { allowedValue: unknown }).allowedValue)}`;
    } else if (e.keyword === 'oneOf' || e.keyword === 'anyOf') {
      const names = exactlyOneOf(e);
      message = names
        ? `must have exactly one of ${names.join(', ')}`
        : `must match ${e.keyword === 'oneOf' ? 'exactly one' : 'at least one'} of the documented forms`;
    } else if (isAmountError(e)) {
      message = 'is out of range: at most 15 digits before the decimal point and 64 characters';
    }
    return { path, message };
  });
}

// Problems listed in one VALIDATION_ERROR (decision 0360); a client fixes them and is told the next ones.
const MAX_LISTED_ERRORS = 50;

/**
 * Validates one part of a request. First the hygiene every part gets whatever its schema says (api/schemas/
 * hygiene.ts: no NUL, no lone surrogate, bounded nesting), then the route's schema. An amount out of range
 * alone is INVALID_AMOUNT; anything else (with or without it) is VALIDATION_ERROR listing the problems (50 at most).
 */
export function validateWith(kind: 'body' | 'query' | 'params', schema: object, data: unknown): void {
  const prefix = kind === 'body' ? '' : `/${kind}`;
  const unsafe = findUnsafeText(data);
  if (unsafe) {
    const path = `${prefix}${unsafe.path}`;
    throw new CambioError('VALIDATION_ERROR', `${path || 'body'} ${unsafe.message}`, {
      errors: [{ path, message: unsafe.message }],
    });
  }
  const fn = compile(kind === 'body' ? bodyAjv : queryAjv, schema);
  // Ajv coerces a query's strings in place; what the client wrote is kept to check how it wrote its numbers.
  const written = kind !== 'body' && data && typeof data === 'object' ? { ...data } : {};
  if (fn(data)) {
    if (kind !== 'body') {
      refuseCoercedInfinity(data, prefix);
      refuseLooseNumbers(written, data, prefix);
    }
    return;
  }
  // At most a page of them: a body of thousands of unknown properties was answered with a list of megabytes.
  const errors = describe(fn.errors, prefix).slice(0, MAX_LISTED_ERRORS);
  const first = errors[0];
  const message = first ? `${first.path || 'body'} ${first.message}` : 'invalid request';
  if (fn.errors?.length && fn.errors.every(isAmountError)) {
    throw new CambioError('INVALID_AMOUNT', message, { path: first?.path, errors });
  }
  throw new CambioError('VALIDATION_ERROR', message, { errors });
}

/**
 * Ajv (8.x) coerces the strings `Infinity`, `-Infinity` and `1e400` to an infinite number that then passes an
 * `integer` type with any `minimum` or `maximum` (its bounds are checked only for finite numbers), so
 * `?limit=Infinity` reached the database. A query or path value is one level deep: an infinite number there is
 * refused as the type Ajv should have refused it.
 */
function refuseCoercedInfinity(data: unknown, prefix: string): void {
  if (!data || typeof data !== 'object') return;
  for (const [name, value] of Object.entries(data)) {
    if (typeof value !== 'number' || Number.isFinite(value)) continue;
    const path = `${prefix}/${name}`;
    throw new CambioError('VALIDATION_ERROR', `${path} must be a finite number`, {
      errors: [{ path, message: 'must be a finite number' }],
    });
  }
}

// How a query number is written: digits, an optional sign and fraction, as an AmountValue is (api/schemas/common.ts).
const DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * Ajv coerces a query string to a number with Number(), which reads `0x10` as 16, `1e1` as 10 and ` 1` as 1: a page
 * of 16 for a client that wrote `limit=0x10` by mistake. A number the schema took is refused unless the client
 * wrote it in decimal digits.
 */
function refuseLooseNumbers(written: object, data: unknown, prefix: string): void {
  if (!data || typeof data !== 'object') return;
  for (const [name, value] of Object.entries(data)) {
    const text = (written as Record<string, unknown>)[name];
    if (typeof value !== 'number' || typeof text !== 'string' || DECIMAL.test(text)) continue;
    const path = `${prefix}/${name}`;
    throw new CambioError('VALIDATION_ERROR', `${path} must be written in decimal digits`, {
      errors: [{ path, message: 'must be written in decimal digits' }],
    });
  }
}

import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { CambioError } from '../errors';

// Bodies are validated strictly (no coercion, no unknown properties); query strings arrive as strings, so
// their validator coerces `limit=10` to a number and nothing else.
const bodyAjv = addFormats(new Ajv({ strict: true, strictRequired: false, allErrors: true, coerceTypes: false, useDefaults: false }));
const queryAjv = addFormats(new Ajv({ strict: true, strictRequired: false, allErrors: true, coerceTypes: true, useDefaults: true }));

const cache = new WeakMap<object, ValidateFunction>();

function compile(ajv: Ajv, schema: object): ValidateFunction {
  let fn = cache.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    cache.set(schema, fn);
  }
  return fn;
}

function describe(errors: ErrorObject[] | null | undefined, prefix: string) {
  return (errors ?? []).map((e) => {
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
    }
    return { path, message };
  });
}

export function validateWith(kind: 'body' | 'query' | 'params', schema: object, data: unknown): void {
  const fn = compile(kind === 'body' ? bodyAjv : queryAjv, schema);
  if (fn(data)) return;
  const errors = describe(fn.errors, kind === 'body' ? '' : `/${kind}`);
  const first = errors[0];
  throw new CambioError('VALIDATION_ERROR', first ? `${first.path || 'body'} ${first.message}` : 'invalid request', { errors });
}

// Reading /openapi.json in tests: its operations, with $refs resolved, and a valid-looking sample of a schema
// for routes no test knows a better body for (routes added later are fuzzed too).
import { randomUUID } from 'node:crypto';

export type Schema = Record<string, unknown>;

export interface OpenApiOperation {
  method: string;
  /** OpenAPI path, e.g. `/api/accounts/{accountId}`. */
  path: string;
  parameters: Array<{ name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema: Schema }>;
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<
    string,
    { description?: string; headers?: Record<string, unknown>; content?: Record<string, { schema: Schema }> }
  >;
  security?: unknown[];
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Omit<OpenApiOperation, 'method' | 'path'>>>;
  components: {
    schemas: Record<string, Schema>;
    responses?: Record<string, unknown>;
    headers?: Record<string, unknown>;
  };
}

/** Follows local `$ref`s (`#/components/...`) until a real object is reached. */
export function deref<T>(doc: OpenApiDocument, node: T): T {
  let current = node as unknown as Record<string, unknown>;
  for (let i = 0; i < 10 && current && typeof current.$ref === 'string'; i++) {
    const parts = (current.$ref as string).replace(/^#\//, '').split('/');
    current = parts.reduce<Record<string, unknown>>(
      (n, p) => n[p] as Record<string, unknown>,
      doc as unknown as Record<string, unknown>,
    );
  }
  return current as unknown as T;
}

export function operationsOf(doc: OpenApiDocument): OpenApiOperation[] {
  const ops: OpenApiOperation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      ops.push({ ...op, method, path, parameters: (op.parameters ?? []).map((p) => deref(doc, p)) });
    }
  }
  return ops;
}

/** A value the schema accepts, as far as a generic generator can tell (formats and enums are honoured). */
export function sampleOf(doc: OpenApiDocument, input: Schema, name = ''): unknown {
  const schema = deref(doc, input);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (Array.isArray(schema.oneOf)) return sampleOf(doc, schema.oneOf[0] as Schema, name);
  if (Array.isArray(schema.anyOf)) return sampleOf(doc, schema.anyOf[0] as Schema, name);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const required = new Set((schema.required ?? []) as string[]);
      const out: Record<string, unknown> = {};
      for (const [key, sub] of Object.entries(props)) if (required.has(key)) out[key] = sampleOf(doc, sub, key);
      return out;
    }
    case 'array':
      return Array.from({ length: Math.max(1, Number(schema.minItems ?? 1)) }, () =>
        sampleOf(doc, (schema.items ?? {}) as Schema, name),
      );
    case 'integer':
    case 'number':
      return Number(schema.minimum ?? 1);
    case 'boolean':
      return false;
    case 'string':
      switch (schema.format) {
        case 'uuid':
          return randomUUID();
        case 'date':
          return '2000-01-01';
        case 'date-time':
          return '2026-01-01T00:00:00Z';
        case 'uri':
          // A literal loopback address: no DNS lookup, and nothing listens on the discard port.
          return 'https://127.0.0.1:9/hook';
        case 'amount':
          return '10.00';
        case 'email':
          return 'someone@example.com';
        default:
          return name === 'country' ? 'BR' : 'sample';
      }
    default:
      return null;
  }
}

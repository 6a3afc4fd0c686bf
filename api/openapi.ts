import type { ErrorCode } from '../domain/errors';
import { statusOf } from './errors';
import type { RouteSpec, RouteTable } from './routes/define';
import { RESPONSE_SCHEMAS } from './schemas/responses';
import { MAX_DEPTH } from './schemas/hygiene';
import { EVENT_PAYLOAD_SCHEMAS, webhooksSection } from './schemas/webhook-events';

const ERROR = { $ref: '#/components/schemas/Error' };
const header = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

const HEADERS = {
  'X-Request-Id': {
    description:
      'Id of this request (the one the client sent in `X-Request-Id` when it is 8-128 of ' +
      '`[A-Za-z0-9._-]`, else generated); quote it when reporting a problem',
    schema: { type: 'string' },
  },
  'X-Service-Version': {
    description: 'API version that served the request',
    schema: { type: 'string', examples: ['1'] },
  },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored response of an earlier request with the same X-Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
  'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } },
};

const API_DESCRIPTION = `
Every error is \`{"code", "message", "details"}\` with the HTTP status of its code, and every response carries
\`X-Request-Id\`. Schema errors are \`400 VALIDATION_ERROR\` with \`details.errors = [{path, message}]\` (JSON \
pointers).

Input rules for every route: text may not contain NUL characters or unpaired UTF-16 surrogates; JSON may nest at
most ${MAX_DEPTH} levels; amounts are decimal strings with at most 15 digits before the point (\`400 INVALID_AMOUNT\`
past that) and no more decimals than the asset has (\`400 INVALID_AMOUNT_PRECISION\`); dates of birth and
incorporation run from 1900-01-01 to today; request line and headers together at most 16 KiB (\`431
HEADERS_TOO_LARGE\`); bodies are JSON (\`415\`) of at most 1 MiB (\`413\`; document uploads 7 MiB).
`.trim();

// Codes any route of a kind can answer, whatever it does.
function commonErrors(r: RouteSpec): ErrorCode[] {
  const mutating = r.method !== 'get' && r.method !== 'delete';
  const codes: ErrorCode[] = ['VALIDATION_ERROR', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE', 'INTERNAL_ERROR'];
  if (!r.public) codes.push('UNAUTHORIZED');
  if (r.params) codes.push('NOT_FOUND');
  if (mutating && !r.public) codes.push('MISSING_IDEMPOTENCY_KEY', 'IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED');
  if (r.body) codes.push('PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  if (r.query && 'properties' in r.query && 'cursor' in (r.query.properties as object))
    codes.push('INVALID_CURSOR', 'INVALID_FILTER');
  // A query string makes the request line as long as the client likes: past 16 KiB with the headers, 431.
  if (r.query) codes.push('HEADERS_TOO_LARGE');
  return codes;
}

/** One response per error status the route can answer, each naming its codes. */
function errorResponses(r: RouteSpec): Record<string, unknown> {
  const byStatus = new Map<number, Set<ErrorCode>>();
  for (const code of [...commonErrors(r), ...(r.errors ?? [])]) {
    const status = statusOf(code);
    if (!byStatus.has(status)) byStatus.set(status, new Set());
    byStatus.get(status)!.add(code);
  }
  const out: Record<string, unknown> = {};
  for (const [status, codes] of [...byStatus.entries()].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: [...codes].map((c) => `\`${c}\``).join(', '),
      headers: {
        'X-Request-Id': header('X-Request-Id'),
        'X-Service-Version': header('X-Service-Version'),
        ...(status === 429 || status === 503 ? { 'Retry-After': header('Retry-After') } : {}),
      },
      content: { 'application/json': { schema: ERROR } },
    };
  }
  return out;
}

// Ajv keywords of ours that are not JSON Schema (ajv-formats' `formatMinimum` on dates of birth): Ajv enforces
// them, the published document states them in words, so that generic tools and linters accept it.
const AJV_ONLY_KEYWORDS: Record<string, (value: unknown) => string> = {
  formatMinimum: (v) => `not before ${String(v)}`,
  formatMaximum: (v) => `not after ${String(v)}`,
  formatExclusiveMinimum: (v) => `after ${String(v)}`,
  formatExclusiveMaximum: (v) => `before ${String(v)}`,
};

/** A copy of `schema` without the Ajv-only keywords, their rule appended to the description. */
function publishable<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(publishable) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  const notes: string[] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (key in AJV_ONLY_KEYWORDS) notes.push(AJV_ONLY_KEYWORDS[key](value));
    else out[key] = publishable(value);
  }
  if (notes.length) out.description = [out.description, `${notes.join(', ')}.`].filter(Boolean).join(' ');
  return out as T;
}

/**
 * OpenAPI 3.1 straight from the route table, so the document and Ajv never disagree. `tokenUrl`: where clients get
 * their bearer tokens (AUTH_URL's token endpoint, else this server's).
 */
export function openApiDocument(table: RouteTable, version: string, serverUrl: string, tokenUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of table.routes) {
    const path = r.path.replace(/:([A-Za-z]+)/g, '{$1}');
    const mutating = r.method !== 'get' && r.method !== 'delete';
    const parameters: unknown[] = [];
    for (const [name, schema] of Object.entries(
      (r.params as { properties?: Record<string, object> })?.properties ?? {},
    )) {
      parameters.push({ name, in: 'path', required: true, schema });
    }
    const query = r.query as { properties?: Record<string, object>; required?: string[] } | undefined;
    for (const [name, schema] of Object.entries(query?.properties ?? {})) {
      parameters.push({ name, in: 'query', required: query?.required?.includes(name) ?? false, schema });
    }
    if (!r.public && mutating) {
      parameters.push({
        name: 'X-Idempotency-Key',
        in: 'header',
        required: true,
        description: 'A UUID; the same key and request replays the stored response for 24 h',
        schema: { type: 'string', format: 'uuid' },
      });
    }
    parameters.push({
      name: 'X-Service-Version',
      in: 'header',
      required: false,
      description: 'API version; missing, empty or unknown: the default',
      schema: { type: 'string' },
    });
    parameters.push({
      name: 'X-Request-Id',
      in: 'header',
      required: false,
      description: 'Your id for this request (8-128 of `[A-Za-z0-9._-]`), echoed back',
      schema: { type: 'string' },
    });
    const status = String(r.response?.status ?? 200);
    paths[path] ??= {};
    const pathInCamelCase = path
      .replace(/\{[^}]+\}/g, 'By')
      .replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase());
    paths[path][r.method] = {
      operationId: `${r.method}${pathInCamelCase}`,
      summary: r.summary,
      tags: [r.tag],
      ...(r.public ? { security: [] } : {}),
      parameters,
      ...(r.body
        ? { requestBody: { required: r.bodyRequired ?? true, content: { 'application/json': { schema: r.body } } } }
        : {}),
      responses: {
        [status]: {
          description: r.response?.description ?? 'OK',
          headers: {
            'X-Request-Id': header('X-Request-Id'),
            'X-Service-Version': header('X-Service-Version'),
            ...(!r.public && mutating ? { 'Idempotent-Replayed': header('Idempotent-Replayed') } : {}),
            ...r.response?.headers,
          },
          ...(r.response?.schema
            ? {
                content: {
                  'application/json': { schema: r.response.schema },
                  ...Object.fromEntries(
                    Object.entries(r.response.otherMedia ?? {}).map(([type, schema]) => [type, { schema }]),
                  ),
                },
              }
            : {}),
        },
        ...errorResponses(r),
      },
    };
  }
  return publishable({
    openapi: '3.1.0',
    info: {
      title: 'Cambio API',
      version,
      description: API_DESCRIPTION,
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: serverUrl }],
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: `An access token from POST ${tokenUrl} with {"clientId", "clientSecret"}, valid for an hour`,
        },
      },
      schemas: { ...RESPONSE_SCHEMAS, ...EVENT_PAYLOAD_SCHEMAS },
      headers: HEADERS,
    },
    security: [{ bearer: [] }],
    paths,
    // The event catalogue: what Cambio POSTs to subscriptions, one entry per type (api/schemas/webhook-events.ts).
    webhooks: webhooksSection(),
  });
}

import type { RouteTable } from './routes/define';

const errorSchema = {
  type: 'object',
  properties: { code: { type: 'string' }, message: { type: 'string' }, details: { type: 'object' } },
  required: ['code', 'message', 'details'],
};

/** OpenAPI 3.1 straight from the route table, so the document and Ajv never disagree. */
export function openApiDocument(table: RouteTable, version: string, serverUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of table.routes) {
    const path = r.path.replace(/:([A-Za-z]+)/g, '{$1}');
    const parameters: unknown[] = [];
    for (const [name, schema] of Object.entries((r.params as { properties?: Record<string, object> })?.properties ?? {})) {
      parameters.push({ name, in: 'path', required: true, schema });
    }
    const query = r.query as { properties?: Record<string, object>; required?: string[] } | undefined;
    for (const [name, schema] of Object.entries(query?.properties ?? {})) {
      parameters.push({ name, in: 'query', required: query?.required?.includes(name) ?? false, schema });
    }
    if (!r.public && r.method !== 'get') {
      parameters.push({ name: 'X-Idempotency-Key', in: 'header', required: true, schema: { type: 'string', format: 'uuid' } });
    }
    parameters.push({ name: 'X-Service-Version', in: 'header', required: false, schema: { type: 'string' } });
    const status = String(r.response?.status ?? 200);
    paths[path] ??= {};
    paths[path][r.method] = {
      summary: r.summary,
      tags: [r.tag],
      ...(r.public ? { security: [] } : {}),
      parameters,
      ...(r.body ? { requestBody: { required: r.bodyRequired ?? true, content: { 'application/json': { schema: r.body } } } } : {}),
      responses: {
        [status]: {
          description: r.response?.description ?? 'OK',
          ...(r.response?.schema ? { content: { 'application/json': { schema: r.response.schema } } } : {}),
        },
        default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Cambio API', version },
    servers: [{ url: serverUrl }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: { Error: errorSchema },
    },
    security: [{ bearer: [] }],
    paths,
  };
}

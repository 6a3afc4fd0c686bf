import type { Context } from 'koa';

// Small HTTP helpers: API Pix answers errors as RFC 7807 problems under https://pix.bcb.gov.br/api/v2/error/.

export function problem(ctx: Context, status: number, name: string, detail: string, violacoes?: unknown[]) {
  ctx.status = status;
  ctx.type = 'application/problem+json';
  ctx.body = {
    type: `https://pix.bcb.gov.br/api/v2/error/${name}`,
    title: name,
    status,
    detail,
    ...(violacoes ? { violacoes } : {}),
  };
}

const MAX_BODY = 1024 * 1024;

/** The request body: JSON, or a form (the token endpoint), or undefined when empty. */
export async function readBody(ctx: Context): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return undefined;
  if (ctx.is('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(text));
  try {
    return JSON.parse(text);
  } catch {
    return Symbol.for('malformed');
  }
}

export const MALFORMED = Symbol.for('malformed');

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

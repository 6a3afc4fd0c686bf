// An API Pix error answer: an RFC 7807 problem (`type`, `title`, `status`, `detail`) whose 400s list `violacoes`,
// each a `razao` (why), a `propriedade` (which field, `cob.valor.original`) and the `valor` refused. Read here for the
// operator's messages and for the few words a customer may be told (decision 0262). No HTTP, no business rule.

export interface Violation {
  razao: string;
  propriedade: string;
}

// A log line stays a line: a PSP that lists a whole body's worth of violations is cut short.
const MAX_VIOLATIONS = 5;
const MAX_TEXT = 200;

const text = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() ? v.trim().slice(0, MAX_TEXT) : undefined;

/** The violations a problem lists that name a field and a reason; `valor` is left out (it may be a CPF). */
export function violationsOf(body: unknown): Violation[] {
  const list = (body as { violacoes?: unknown } | null | undefined)?.violacoes;
  if (!Array.isArray(list)) return [];
  return list.flatMap((v: unknown) => {
    const item = (typeof v === 'object' && v !== null ? v : {}) as { razao?: unknown; propriedade?: unknown };
    const razao = text(item.razao);
    const propriedade = text(item.propriedade);
    return razao || propriedade ? [{ razao: razao ?? 'invalid', propriedade: propriedade ?? '(body)' }] : [];
  });
}

/**
 * The operator's words for a problem: its detail (or title) and each violation as `propriedade: razao`. The value
 * the PSP echoes is not repeated: the operator has what Cambio sent, and a log is no place for a payer's CPF.
 */
export function describeProblem(body: unknown): string {
  const problem = (typeof body === 'object' && body !== null ? body : {}) as { title?: unknown; detail?: unknown };
  const why = text(problem.detail) ?? text(problem.title) ?? '';
  const violations = violationsOf(body);
  const listed = violations.slice(0, MAX_VIOLATIONS).map((v) => `${v.propriedade}: ${v.razao}`);
  if (violations.length > MAX_VIOLATIONS) listed.push(`and ${violations.length - MAX_VIOLATIONS} more`);
  return [why, listed.length ? `(${listed.join('; ')})` : ''].filter(Boolean).join(' ');
}

// The fields of a charge (`PUT /cob/{txid}`) that carry the customer's own data, in the customer's words. The others
// (the key, the expiry, the txid) are Cambio's configuration: a customer can do nothing about them.
const CHARGE_FIELDS: [RegExp, string][] = [
  [/^devedor(\.|$)/, "the account owner's name or tax id (the charge's payer)"],
  [/^valor(\.|$)/, 'the amount'],
  [/^solicitacaoPagador$/, 'the description'],
];

// The fields of a return (`PUT /pix/{e2eid}/devolucao/{id}`) the payment's record shows: its amount and the reason
// given for the return. `natureza` and the ids are Cambio's (decision 0278).
const RETURN_FIELDS: [RegExp, string][] = [
  [/^valor$/, 'the amount'],
  [/^descricao$/, 'the reason'],
];

// The fields of a payout (`PUT /v3/gn/pix/{idEnvio}`) that are the customer's: the payee's key and the amount. The
// payer's key is Cambio's own (decision 0319).
const PAYOUT_FIELDS: [RegExp, string][] = [
  [/^favorecido(\.|$)/, "the payee's PIX key"],
  [/^valor$/, 'the amount'],
];

/** Which of the customer's data the PSP refused in a payout, in the customer's words; undefined when none. */
export function payoutRefusalForCustomer(body: unknown): string | undefined {
  // The payout's fields are at the top of its body: no prefix to drop.
  return refusedFields(body, /^$/, PAYOUT_FIELDS);
}

/** Which of the customer's data the PSP refused in a charge, in the customer's words; undefined when none. */
export function chargeRefusalForCustomer(body: unknown): string | undefined {
  return refusedFields(body, /^cob\./, CHARGE_FIELDS);
}

/** A refused return as its payment shows it: refused, and which of its shown fields when the PSP named them. */
export function returnRefusalForCustomer(body: unknown): string {
  const named = refusedFields(body, /^devolucao\./, RETURN_FIELDS);
  return `the PSP refused the return${named ? `: ${named}` : ''}`;
}

function refusedFields(body: unknown, prefix: RegExp, fields: [RegExp, string][]): string | undefined {
  const named = new Set<string>();
  for (const v of violationsOf(body)) {
    const field = v.propriedade.replace(prefix, '');
    const words = fields.find(([pattern]) => pattern.test(field))?.[1];
    if (words) named.add(words);
  }
  return named.size ? `the PSP refused ${[...named].join(' and ')}` : undefined;
}

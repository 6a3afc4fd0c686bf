import { randomBytes, randomUUID } from 'node:crypto';
import type Koa from 'koa';
import { BankLedger, type BookedCredit } from './ledger';

// A bank's Open Finance Brasil Accounts API v2, as Cambio's TED rail reads it (rails/ted/): OAuth2 client
// credentials at `{base}/token`, `GET {base}/accounts/v2/accounts/{accountId}/transactions` with booking dates,
// `creditDebitIndicator`, `page` and `page-size`, answering `{data, links, meta}`. `{base}` is `/open-finance` on the
// simulator's address. Control routes under /sim/bank-accounts play the payers and the faults: book a TED (payer's
// CNPJ/CPF, amount, bank details), list one booked credit twice or with other fields (`listedAs`: another `type`, not
// effected yet), answer 5xx for the next requests.

export const BANK_ACCOUNTS_BASE = '/open-finance';
const TRANSACTIONS = /^\/open-finance\/accounts\/v2\/accounts\/([^/]+)\/transactions$/;
const CONTROL = '/sim/bank-accounts';
const DEFAULT_PAGE_SIZE = 25;
const MAX_PAGE_SIZE = 1000;
const TOKEN_TTL_SECONDS = 900;

export interface BankAccountsOptions {
  /** Where the booked credits are kept. */
  stateFile: string;
  /** Client id → secret this bank knows. */
  clients: Record<string, string>;
  /** The account a credit is booked to when its control request names none. */
  defaultAccountId: string;
}

const day = (at: Date) => new Date(at.getTime() - 3 * 3600_000).toISOString().slice(0, 10);

export function bankAccountsRoutes(options: BankAccountsOptions): Koa.Middleware {
  const ledger = new BankLedger(options.stateFile);
  const tokens = new Map<string, number>();
  let outage: { remaining: number; status: number } | undefined;

  const oauthError = (ctx: Koa.Context, status: number, error: string) => {
    ctx.status = status;
    ctx.body = { error };
  };
  // Open Finance errors: `{errors: [{code, title, detail}], meta}`.
  const ofbError = (ctx: Koa.Context, status: number, code: string, detail: string) => {
    ctx.status = status;
    ctx.body = { errors: [{ code, title: code, detail }], meta: { requestDateTime: new Date().toISOString() } };
  };

  function issueToken(ctx: Koa.Context) {
    const [scheme, encoded] = ctx.get('authorization').split(' ');
    const [id, secret] = Buffer.from(encoded ?? '', 'base64')
      .toString('utf8')
      .split(/:(.*)/s);
    if (scheme !== 'Basic' || !id || options.clients[id] !== secret) return oauthError(ctx, 401, 'invalid_client');
    if ((ctx.state.body as { grant_type?: string } | undefined)?.grant_type !== 'client_credentials') {
      return oauthError(ctx, 400, 'unsupported_grant_type');
    }
    const value = randomBytes(24).toString('hex');
    tokens.set(value, Date.now() + TOKEN_TTL_SECONDS * 1000);
    ctx.body = { access_token: value, token_type: 'Bearer', expires_in: TOKEN_TTL_SECONDS, scope: 'accounts' };
  }

  function listTransactions(ctx: Koa.Context, accountId: string) {
    const bearer = /^Bearer (.+)$/.exec(ctx.get('authorization'))?.[1];
    const expires = bearer ? tokens.get(bearer) : undefined;
    if (!expires || expires < Date.now()) return ofbError(ctx, 401, 'UNAUTHORIZED', 'invalid or expired token');
    const q = ctx.query as Record<string, string | undefined>;
    const date = /^\d{4}-\d{2}-\d{2}$/;
    if ((q.fromBookingDate && !date.test(q.fromBookingDate)) || (q.toBookingDate && !date.test(q.toBookingDate))) {
      return ofbError(ctx, 422, 'PARAMETRO_INVALIDO', 'booking dates are YYYY-MM-DD');
    }
    const page = Number(q.page ?? 1);
    const pageSize = Number(q['page-size'] ?? DEFAULT_PAGE_SIZE);
    if (!Number.isInteger(page) || page < 1 || !Number.isInteger(pageSize) || pageSize < 1) {
      return ofbError(ctx, 422, 'PARAMETRO_INVALIDO', 'page and page-size are whole numbers from 1');
    }
    if (pageSize > MAX_PAGE_SIZE)
      return ofbError(ctx, 422, 'PARAMETRO_INVALIDO', `page-size is at most ${MAX_PAGE_SIZE}`);
    // Only credits are booked here: creditDebitIndicator=DEBITO lists nothing.
    const rows =
      q.creditDebitIndicator && q.creditDebitIndicator !== 'CREDITO'
        ? []
        : ledger
            .all()
            .filter((c) => c.accountId === accountId)
            .filter((c) => !q.fromBookingDate || c.bookingDate >= q.fromBookingDate)
            .filter((c) => !q.toBookingDate || c.bookingDate <= q.toBookingDate)
            .sort((a, b) => a.transactionDateTime.localeCompare(b.transactionDateTime))
            .flatMap((c) => Array.from({ length: c.listings }, () => entry(c)));
    const totalPages = Math.max(1, Math.ceil(rows.length / pageSize));
    const self = new URL(ctx.href);
    const link = (n: number) => {
      self.searchParams.set('page', String(n));
      return self.toString();
    };
    ctx.body = {
      data: rows.slice((page - 1) * pageSize, page * pageSize),
      links: {
        self: link(page),
        first: link(1),
        ...(page > 1 ? { prev: link(page - 1) } : {}),
        ...(page < totalPages ? { next: link(page + 1) } : {}),
        last: link(totalPages),
      },
      meta: { totalRecords: rows.length, totalPages, requestDateTime: new Date().toISOString() },
    };
  }

  function bookCredit(ctx: Koa.Context) {
    const b = (ctx.state.body ?? {}) as Record<string, unknown>;
    const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
    const amount = str(b.amount);
    // A tax id as the bank writes it, without its punctuation: an alphanumeric CNPJ keeps its letters.
    const payer = str(b.payerTaxId)?.replace(/[^0-9A-Za-z]/g, '');
    if (!amount || !/^\d{1,15}\.\d{2}$/.test(amount) || !payer) {
      ctx.status = 400;
      ctx.body = { error: 'amount (e.g. "100.00") and payerTaxId (CNPJ or CPF) are required' };
      return;
    }
    const transactionId = str(b.transactionId) ?? `TED${randomUUID().replace(/-/g, '').toUpperCase()}`;
    const known = ledger.find(transactionId);
    if (known) {
      ctx.status = 200;
      ctx.body = known;
      return;
    }
    const at = new Date();
    const credit: BookedCredit = {
      accountId: str(b.accountId) ?? options.defaultAccountId,
      transactionId,
      amount,
      transactionDateTime: at.toISOString(),
      bookingDate: str(b.bookingDate) ?? day(at),
      partieCnpjCpf: payer,
      partiePersonType: payer.length === 11 ? 'PESSOA_NATURAL' : 'PESSOA_JURIDICA',
      partieCompeCode: str(b.bankCode) ?? '001',
      partieBranchCode: str(b.branchCode) ?? '1234',
      partieNumber: str(b.accountNumber) ?? '987654',
      partieCheckDigit: str(b.accountDigit) ?? '3',
      listings: 1,
      ...(isObject(b.listedAs) ? { listedAs: b.listedAs } : {}),
    };
    ledger.add(credit);
    ctx.status = 201;
    ctx.body = credit;
  }

  async function control(ctx: Koa.Context): Promise<boolean> {
    const path = ctx.path.slice(CONTROL.length);
    if (ctx.method === 'POST' && path === '/credits') return (bookCredit(ctx), true);
    if (ctx.method === 'GET' && path === '/credits') return ((ctx.body = { credits: ledger.all() }), true);
    const repeat = /^\/credits\/([^/]+)\/repeat$/.exec(path);
    if (ctx.method === 'POST' && repeat) {
      const credit = ledger.find(decodeURIComponent(repeat[1]));
      if (!credit) return ((ctx.status = 404), (ctx.body = { error: 'no such credit' }), true);
      ledger.repeat(credit);
      return ((ctx.body = credit), true);
    }
    const relist = /^\/credits\/([^/]+)\/listed-as$/.exec(path);
    if (ctx.method === 'POST' && relist) {
      const credit = ledger.find(decodeURIComponent(relist[1]));
      if (!credit) return ((ctx.status = 404), (ctx.body = { error: 'no such credit' }), true);
      const body = ctx.state.body as unknown;
      if (!isObject(body))
        return ((ctx.status = 400), (ctx.body = { error: 'the fields to list, as an object' }), true);
      ledger.relist(credit, body);
      return ((ctx.body = credit), true);
    }
    if (ctx.method === 'POST' && path === '/outage') {
      const b = (ctx.state.body ?? {}) as { count?: number; status?: number };
      outage = { remaining: b.count ?? 1, status: b.status ?? 503 };
      return ((ctx.status = 204), true);
    }
    return false;
  }

  return async (ctx, next) => {
    if (ctx.path.startsWith(`${CONTROL}/`)) return (await control(ctx)) ? undefined : next();
    if (!ctx.path.startsWith(`${BANK_ACCOUNTS_BASE}/`)) return next();
    if (outage && outage.remaining > 0) {
      outage.remaining--;
      ctx.set('Retry-After', '1');
      return ofbError(ctx, outage.status, 'INDISPONIVEL', 'simulated outage');
    }
    if (ctx.method === 'POST' && ctx.path === `${BANK_ACCOUNTS_BASE}/token`) return issueToken(ctx);
    const account = TRANSACTIONS.exec(ctx.path);
    if (ctx.method === 'GET' && account) return listTransactions(ctx, decodeURIComponent(account[1]));
    ofbError(ctx, 404, 'NAO_ENCONTRADO', `${ctx.method} ${ctx.path}`);
  };
}

/** One booked credit as the Accounts API v2 lists it. */
function entry(c: BookedCredit) {
  return {
    transactionId: c.transactionId,
    completedAuthorisedPaymentType: 'TRANSACAO_EFETIVADA',
    creditDebitType: 'CREDITO',
    transactionName: 'TED RECEBIDA',
    type: 'TED',
    transactionAmount: { amount: `${c.amount}00`, currency: 'BRL' },
    transactionDateTime: c.transactionDateTime,
    partieCnpjCpf: c.partieCnpjCpf,
    partiePersonType: c.partiePersonType,
    partieCompeCode: c.partieCompeCode,
    partieBranchCode: c.partieBranchCode,
    partieNumber: c.partieNumber,
    partieCheckDigit: c.partieCheckDigit,
    ...c.listedAs,
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { tenantEm } from '../../db/orm';
import { openDeposit as openDepositWithCharge } from '../../services/operations/deposit';
import { quote } from './money';
import { stack, TestCustomer } from './stack';

/**
 * A fresh end-to-end id in the SPI's format (E + 8 digits + 12 digits + 11 alphanumerics), the only one a PIX notice
 * carries: a payment the sandbox pays through the simulated PSP is recorded from its notice.
 */
export const spiEndToEndId = (): string =>
  `E99999008${String(Date.now() % 1e12).padStart(12, '0')}${randomUUID().replace(/-/g, '').slice(0, 11)}`;

export interface PaymentView {
  id: string;
  status: string;
  amount: { value: string };
  matchedAmount: { value: string } | null;
  remainderOf: string | null;
  endToEndId: string;
  /** CRYPTO: the chain's facts about the transfer. */
  chain: { confirmations: number; blockNumber: string; blockHash: string; tokenUnits: string } | null;
}

export interface PayOptions {
  endToEndId?: string;
  key?: string;
  asset?: string;
}

type Windows = { deposit: number; replay: number };

export interface Deposit {
  id: string;
}

/**
 * A BRL→BRL deposit of `value` by PIX (or `via` another rail and asset, e.g. CRYPTO in EURC); `windows` shortens its
 * deposit and replay windows (seconds).
 */
export async function openDeposit(
  c: TestCustomer,
  accountId: string,
  value: string,
  windows?: Windows,
  via: { rail: 'PIX_KEY' | 'CRYPTO' | 'TED' | 'BOLETO'; asset: string } = { rail: 'PIX_KEY', asset: 'BRL' },
): Promise<Deposit> {
  const { services, config } = await stack();
  const q = await quote(c, { accountId, sourceAsset: via.asset, targetAsset: via.asset, sourceAmount: value });
  const short = windows && { ...config, depositWindowSeconds: windows.deposit, replayWindowSeconds: windows.replay };
  const s = short ? { ...services, config: short } : services;
  const body = { accountId, quoteId: q.id, fundingInstruction: { rail: via.rail } };
  return openDepositWithCharge(s, tenantEm(services.orm, c.customerId), body, randomUUID());
}

export async function pay(c: TestCustomer, operationId: string, value: string, opts: PayOptions = {}) {
  const { http } = await stack();
  const body = {
    amount: { value, asset: opts.asset ?? 'BRL' },
    ...(opts.endToEndId ? { endToEndId: opts.endToEndId } : {}),
  };
  const path = `/api/sandbox/operations/${operationId}/inbound-payment`;
  return http
    .post(path)
    .set(c.auth)
    .set('X-Idempotency-Key', opts.key ?? randomUUID())
    .send(body);
}

export async function paymentsOf(c: TestCustomer, filters: string) {
  const { http } = await stack();
  const res = await http.get('/api/inbound-payments').query({ filters, limit: 100 }).set(c.auth);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body.data as PaymentView[];
}

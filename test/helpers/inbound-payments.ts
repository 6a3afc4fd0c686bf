import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { tenantEm } from '../../db/orm';
import { createDeposit } from '../../api/services/operations/deposit';
import { quote } from './money';
import { stack, TestCustomer } from './stack';

export interface Deposit {
  id: string;
}

/** A BRL→BRL deposit of `value` by PIX; `windows` shortens its deposit and replay windows (seconds). */
export async function openDeposit(c: TestCustomer, accountId: string, value: string, windows?: { deposit: number; replay: number }): Promise<Deposit> {
  const { services, config } = await stack();
  const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: value });
  const s = windows ? { ...services, config: { ...config, depositWindowSeconds: windows.deposit, replayWindowSeconds: windows.replay } } : services;
  return createDeposit(s, tenantEm(services.orm, c.customerId), { accountId, quoteId: q.id, fundingInstruction: { rail: 'PIX_KEY' } });
}

export async function pay(c: TestCustomer, operationId: string, value: string, opts: { endToEndId?: string; key?: string; asset?: string } = {}) {
  const { http } = await stack();
  const body = { amount: { value, asset: opts.asset ?? 'BRL' }, ...(opts.endToEndId ? { endToEndId: opts.endToEndId } : {}) };
  return http.post(`/api/sandbox/operations/${operationId}/inbound-payment`).set(c.auth).set('X-Idempotency-Key', opts.key ?? randomUUID()).send(body);
}

export async function paymentsOf(c: TestCustomer, filters: string) {
  const { http } = await stack();
  const res = await http.get('/api/inbound-payments').query({ filters, limit: 100 }).set(c.auth);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body.data as Array<{ id: string; status: string; amount: { value: string }; remainderOf: string | null; endToEndId: string }>;
}


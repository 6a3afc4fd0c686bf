import type { SimulatorHandle as Simulator } from './handle';
import type { Devolucao, ReceivedPix, ScheduledPayment, State } from './store';

// What happens at the PSP with time: scheduled payments arrive, payouts and returns settle, and notices go to the
// registered webhook with retries until the receiver answers 2xx (it answers 200 only once it recorded them).

// Svix-like back-off, compressed for a sandbox: a receiver that is down a minute still gets every notice.
const NOTICE_RETRY_MS = [200, 500, 1000, 2000, 5000, 10000, 30000, 60000, 120000, 300000];
const NOTICE_TIMEOUT_MS = 5000;
const DELIVERED_KEPT = 500;

/** A received Pix as API Pix shows it (notice, GET /pix): the simulator's bookkeeping left out. */
export function presentPix(p: ReceivedPix) {
  return {
    endToEndId: p.endToEndId,
    ...(p.txid ? { txid: p.txid } : {}),
    valor: p.valor,
    chave: p.chave,
    horario: p.horario,
    ...(p.pagador ? { pagador: p.pagador } : {}),
    ...(p.infoPagador ? { infoPagador: p.infoPagador } : {}),
    ...(p.devolucoes.length ? { devolucoes: p.devolucoes.map(presentDevolucao) } : {}),
  };
}

export function presentDevolucao(d: Devolucao) {
  const { settleAt: _settleAt, outcome: _outcome, ...shown } = d;
  return shown;
}

/**
 * Whether a return of `valor` fits what is left of `pix` to return (the returns not refused count), and is not zero:
 * API Pix refuses the rest, whoever asks (Cambio through the API, the PSP itself for a MED return).
 */
export function fitsReturn(pix: ReceivedPix, valor: string): boolean {
  const cents = (v: string) => Math.round(Number(v) * 100);
  const taken = pix.devolucoes.filter((d) => d.status !== 'NAO_REALIZADO').reduce((t, d) => t + cents(d.valor), 0);
  return cents(valor) > 0 && taken + cents(valor) <= cents(pix.valor);
}

export function enqueueNotice(state: State, pix: ReceivedPix, copies = 1) {
  const hook = state.webhooks[pix.chave];
  if (!hook) return;
  const url = `${hook.webhookUrl.replace(/\/+$/, '')}/pix`;
  for (let i = 0; i < copies; i++) {
    state.notices.push({
      id: `${pix.endToEndId}-${state.seq++}`,
      url,
      body: { pix: [presentPix(pix)] },
      attempts: 0,
      nextAt: Date.now(),
    });
  }
}

/** Records a payment that arrived: the Pix, its charge paid, its notices queued. */
export function arrive(state: State, s: ScheduledPayment) {
  if (state.received[s.endToEndId]) return state.received[s.endToEndId];
  const pix: ReceivedPix = { ...s.pix, horario: new Date().toISOString(), devolucoes: [] };
  state.received[pix.endToEndId] = pix;
  const charge = pix.txid ? state.charges[pix.txid] : undefined;
  if (charge) charge.status = 'CONCLUIDA';
  enqueueNotice(state, pix, s.notices);
  return pix;
}

export async function settleDue(sim: Simulator): Promise<void> {
  const state = sim.store.state;
  const now = Date.now();
  const due = state.scheduled.some((s) => s.dueAt <= now);
  const payouts = Object.values(state.payouts).filter(
    (p) => p.status === 'EM_PROCESSAMENTO' && p.settleAt !== undefined && p.settleAt <= now,
  );
  const returns = Object.values(state.received).filter((p) =>
    p.devolucoes.some((d) => d.status === 'EM_PROCESSAMENTO' && d.settleAt !== undefined && d.settleAt <= now),
  );
  if (!due && !payouts.length && !returns.length) return;
  await sim.store.change((s) => {
    for (const payment of s.scheduled.filter((x) => x.dueAt <= now)) arrive(s, payment);
    s.scheduled = s.scheduled.filter((x) => x.dueAt > now);
    for (const p of payouts) {
      p.status = p.outcome ?? 'REALIZADO';
      if (p.status === 'REALIZADO') p.horario.liquidacao = new Date(now).toISOString();
    }
    for (const pix of returns) {
      for (const d of pix.devolucoes) {
        if (d.status !== 'EM_PROCESSAMENTO' || d.settleAt === undefined || d.settleAt > now) continue;
        d.status = d.outcome ?? 'DEVOLVIDO';
        if (d.status === 'DEVOLVIDO') d.horario.liquidacao = new Date(now).toISOString();
      }
      enqueueNotice(s, pix);
    }
  });
}

export async function deliverDue(sim: Simulator) {
  const now = Date.now();
  const due = sim.store.state.notices.filter((n) => n.nextAt <= now);
  if (!due.length) return;
  const results = await Promise.all(
    due.map(async (n) => {
      try {
        const res = await fetch(n.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(n.body),
          signal: AbortSignal.timeout(NOTICE_TIMEOUT_MS),
        });
        await res.text().catch(() => '');
        return { n, status: res.status };
      } catch (err) {
        return { n, status: 0, error: (err as Error).message };
      }
    }),
  );
  await sim.store.change((s) => {
    for (const { n, status, error } of results) {
      const notice = s.notices.find((x) => x.id === n.id);
      if (!notice) continue;
      notice.attempts++;
      const done = status >= 200 && status < 300;
      if (done || notice.attempts > NOTICE_RETRY_MS.length) {
        s.notices = s.notices.filter((x) => x.id !== n.id);
        s.delivered.push({ url: n.url, body: n.body, at: new Date().toISOString(), status });
        s.delivered = s.delivered.slice(-DELIVERED_KEPT);
      } else {
        notice.nextAt = Date.now() + NOTICE_RETRY_MS[notice.attempts - 1];
        notice.lastError = error ?? `HTTP ${status}`;
      }
    }
  });
}

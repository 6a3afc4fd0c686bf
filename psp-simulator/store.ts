import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

// The simulator's durable state: one JSON file, rewritten whole (temp file + rename, atomic on POSIX) after a
// change and before the answer leaves. A PSP's state must outlive its process (a payout taken before a crash is
// still there after it), and one process of a test sandbox needs nothing more: no database to provision or
// migrate, and a glance at the file shows what the "bank" holds.

export interface Charge {
  txid: string;
  criacao: string;
  expiracao: number;
  valor: string;
  chave: string;
  devedor?: Record<string, string>;
  solicitacaoPagador?: string;
  location: string;
  /** API Pix's statuses of a cob: taking payments, paid, or removed by the receiving user or by the PSP. */
  status: 'ATIVA' | 'CONCLUIDA' | 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | 'REMOVIDA_PELO_PSP';
}

export interface Devolucao {
  id: string;
  rtrId: string;
  valor: string;
  natureza: string;
  descricao?: string;
  horario: { solicitacao: string; liquidacao?: string };
  status: 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';
  motivo?: string;
  /** When the return settles (ms since epoch), and how; no settleAt: pending until a control route says. */
  settleAt?: number;
  outcome?: 'DEVOLVIDO' | 'NAO_REALIZADO';
}

export interface ReceivedPix {
  endToEndId: string;
  txid?: string;
  valor: string;
  horario: string;
  chave: string;
  pagador?: Record<string, string>;
  infoPagador?: string;
  devolucoes: Devolucao[];
}

/** A payment a control route asked for, made at `dueAt`. */
export interface ScheduledPayment {
  endToEndId: string;
  dueAt: number;
  pix: Omit<ReceivedPix, 'horario' | 'devolucoes'>;
  notices: number;
}

export type PayoutStatus = 'EM_PROCESSAMENTO' | 'REALIZADO' | 'NAO_REALIZADO';

export interface Payout {
  idEnvio: string;
  e2eId: string;
  valor: string;
  pagador: { chave: string; infoPagador?: string };
  favorecido: Record<string, unknown>;
  status: PayoutStatus;
  horario: { solicitacao: string; liquidacao?: string };
  motivo?: string;
  /** When it leaves EM_PROCESSAMENTO, and to what; no settleAt: it stays pending until a control route says. */
  settleAt?: number;
  outcome?: PayoutStatus;
}

export interface Notice {
  id: string;
  url: string;
  body: unknown;
  attempts: number;
  nextAt: number;
  lastError?: string;
}

export interface State {
  seq: number;
  charges: Record<string, Charge>;
  received: Record<string, ReceivedPix>;
  scheduled: ScheduledPayment[];
  webhooks: Record<string, { webhookUrl: string; criacao: string }>;
  payouts: Record<string, Payout>;
  /** Payouts to these keys end as said here (the sandbox's failing key is one). */
  payoutRules: Record<string, { outcome: PayoutStatus; motivo?: string }>;
  /** Returns of these end-to-end ids end as said here. */
  returnRules: Record<string, { outcome: 'DEVOLVIDO' | 'NAO_REALIZADO' | 'EM_PROCESSAMENTO'; motivo?: string }>;
  notices: Notice[];
  delivered: { url: string; body: unknown; at: string; status: number }[];
}

const empty = (): State => ({
  seq: 0,
  charges: {},
  received: {},
  scheduled: [],
  webhooks: {},
  payouts: {},
  payoutRules: {
    'payout-fails@example.com': { outcome: 'NAO_REALIZADO', motivo: 'Chave do favorecido recusada pela instituicao' },
  },
  returnRules: {},
  notices: [],
  delivered: [],
});

export class Store {
  readonly state: State;
  /** The write that changes made now will be in; undefined when none is waiting to start. */
  private next: Promise<void> | undefined;
  /** The write under way (settled, never rejected: the chain of writes goes on after a failed one). */
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly file: string) {
    this.state = existsSync(file) ? { ...empty(), ...(JSON.parse(readFileSync(file, 'utf8')) as State) } : empty();
    mkdirSync(dirname(file), { recursive: true });
  }

  /**
   * Changes the state and resolves once a write that holds the change is on disk, so whatever the caller answers
   * is durable. Changes made while a write is under way share the next one (a group commit): rewriting the whole
   * file per change took most of the simulator's CPU under load.
   */
  async change<T>(fn: (state: State) => T): Promise<T> {
    const result = fn(this.state);
    await this.persist();
    return result;
  }

  /** Resolves once every change made so far is on disk. */
  flushed(): Promise<void> {
    return this.next ?? this.writing;
  }

  private persist(): Promise<void> {
    this.next ??= this.writing.then(() => {
      this.next = undefined;
      const write = this.write(JSON.stringify(this.state));
      this.writing = write.catch(() => undefined);
      return write;
    });
    return this.next;
  }

  private async write(json: string) {
    const tmp = `${this.file}.${process.pid}.tmp`;
    await writeFile(tmp, json);
    await rename(tmp, this.file);
  }
}

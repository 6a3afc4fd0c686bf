import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

// The simulated bank's boletos, its registered webhook and its notices in flight: a JSON file of its own beside the
// PSP's, written (whole, by rename) before each answer that changed it.

export interface Boleto {
  codigoSolicitacao: string;
  seuNumero: string;
  valorNominal: string;
  dataEmissao: string;
  dataVencimento: string;
  situacao: string;
  dataSituacao: string;
  valorTotalRecebido?: string;
  origemRecebimento?: string;
  dataPagamento?: string;
  pagador: Record<string, unknown>;
  nossoNumero: string;
  codigoBarras: string;
  linhaDigitavel: string;
  txid: string;
  pixCopiaECola: string;
  motivoCancelamento?: string;
}

export interface BankNotice {
  id: string;
  url: string;
  body: unknown[];
  attempts: number;
  nextAt: number;
}

export interface BankState {
  seq: number;
  boletos: Boleto[];
  webhookUrl?: string;
  notices: BankNotice[];
  delivered: number;
}

export class BankStore {
  state: BankState;

  constructor(private readonly file: string) {
    this.state = existsSync(file)
      ? (JSON.parse(readFileSync(file, 'utf8')) as BankState)
      : { seq: 0, boletos: [], notices: [], delivered: 0 };
  }

  save(): void {
    mkdirSync(dirname(this.file), { recursive: true });
    writeFileSync(`${this.file}.tmp`, JSON.stringify(this.state));
    renameSync(`${this.file}.tmp`, this.file);
  }
}

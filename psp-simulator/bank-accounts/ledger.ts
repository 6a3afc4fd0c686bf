import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

// The simulated bank's collection accounts: the TEDs they received, kept in a JSON file of their own beside the
// PSP's state (written whole before each answer), so a restart of the process keeps what the bank booked.

/** One credit as the bank books it; `listings` > 1: the bank lists it that many times (a duplicate row). */
export interface BookedCredit {
  accountId: string;
  transactionId: string;
  amount: string;
  transactionDateTime: string;
  /** YYYY-MM-DD in Brasília time. */
  bookingDate: string;
  partieCnpjCpf: string;
  partiePersonType: 'PESSOA_NATURAL' | 'PESSOA_JURIDICA';
  partieCompeCode: string;
  partieBranchCode: string;
  partieNumber: string;
  partieCheckDigit: string;
  listings: number;
  /**
   * Fields the bank lists differently from a plain TED effected (`type`, `completedAuthorisedPaymentType`, a payer's
   * tax id as a JSON number...): merged over the entry it lists, so a test plays a bank's other answers.
   */
  listedAs?: Record<string, unknown>;
}

export class BankLedger {
  private credits: BookedCredit[] = [];

  constructor(private readonly file: string) {
    if (existsSync(file))
      this.credits = (JSON.parse(readFileSync(file, 'utf8')) as { credits: BookedCredit[] }).credits;
  }

  all(): BookedCredit[] {
    return this.credits;
  }

  find(transactionId: string): BookedCredit | undefined {
    return this.credits.find((c) => c.transactionId === transactionId);
  }

  add(credit: BookedCredit): void {
    this.credits.push(credit);
    this.save();
  }

  repeat(credit: BookedCredit): void {
    credit.listings++;
    this.save();
  }

  /** The bank now lists the credit with these fields (say, effected: `completedAuthorisedPaymentType`). */
  relist(credit: BookedCredit, listedAs: Record<string, unknown>): void {
    credit.listedAs = { ...credit.listedAs, ...listedAs };
    this.save();
  }

  private save(): void {
    mkdirSync(dirname(this.file), { recursive: true });
    writeFileSync(this.file, JSON.stringify({ credits: this.credits }, null, 1));
  }
}

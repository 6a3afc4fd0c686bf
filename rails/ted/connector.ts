// The TED connector: Cambio's collection account read through the bank's Open Finance Brasil Accounts API v2. It
// only lists (reconciliation on TED_POLL_SECONDS): a TED carries no charge of ours to create and no notice to
// verify, and the Accounts API moves no money (a TED is returned at the bank; decision 0129).
import { RailRejectedError } from '../errors';
import type { ListingCapability, RailConnector, ReceivedPayment, SandboxPayerCapability, TimeWindow } from '../rail';
import type { TedClient } from './client';
import {
  bookingDates,
  creditProblem,
  followPages,
  isTedCredit,
  receivedTed,
  type TransactionsPage,
} from './transactions';

export const TED_RAIL = 'TED';
export const TED_ASSET = 'BRL';

export interface TedRailOptions {
  /** TED_ACCOUNT_ID: the collection account's id in the Accounts API. */
  accountId: string;
  pageSize: number;
  /** Where an entry the bank lists but Cambio cannot read is reported (it is left out, never guessed at). */
  warn?: (message: string, details: Record<string, unknown>) => void;
  /** In sandbox: the simulated bank's payer of deposits (./sandbox-payer.ts). */
  sandbox?: SandboxPayerCapability;
}

export class TedRail implements RailConnector, ListingCapability {
  readonly rail = TED_RAIL;
  readonly listing = this;
  readonly sandbox?: SandboxPayerCapability;

  constructor(
    private readonly client: TedClient,
    private readonly options: TedRailOptions,
  ) {
    this.sandbox = options.sandbox;
  }

  close(): Promise<void> {
    return this.client.close();
  }

  /** The TEDs credited over the booking days that cover `window` (today and yesterday at least), every page. */
  async listReceived(window: TimeWindow): Promise<ReceivedPayment[]> {
    const path = `/accounts/v2/accounts/${encodeURIComponent(this.options.accountId)}/transactions`;
    const days = bookingDates(window);
    const entries = await followPages(async (page) => {
      const query = { ...days, creditDebitIndicator: 'CREDITO', page, 'page-size': this.options.pageSize };
      const res = await this.client.get(path, query);
      const body = res.body as TransactionsPage | undefined;
      if (res.status !== 200 || !Array.isArray(body?.data)) {
        throw new RailRejectedError(`GET ${path} page ${page}: HTTP ${res.status}`, res.status, res.body);
      }
      return body;
    });
    const credits: ReceivedPayment[] = [];
    for (const entry of entries.filter(isTedCredit)) {
      const problem = creditProblem(entry);
      if (problem) {
        // Passed on all the same: its recording fails, and the run keeps its window (decisions 0188, 0301).
        const warn = this.options.warn ?? ((m, d) => console.warn(m, d));
        warn('a credit the bank lists is not recorded (yet)', {
          transactionId: (entry as { transactionId?: unknown } | null)?.transactionId,
          problem,
        });
      }
      credits.push(receivedTed(entry));
    }
    return credits;
  }
}

// The one list of rails (decision 0118): what each rail is, the assets it pays in, how a deposit on it is funded, and
// its connector when this deployment has a provider for it. Everything else that needs a rail (funding
// instructions, the deposit's charge, inbound payments' assets, operator recording, /readyz, the notice route,
// the rail activities) reads it here. A new rail is a folder under rails/ and one line below (docs/architecture.md,
// "Adding a rail").
import type { Config } from '../config';
import { boletoRail } from './boleto';
import { cryptoRail } from './crypto';
import { pixRail } from './pix';
import type { RailConnector, RailEntry, RailStores } from './rail';
import { tedRail } from './ted';

export const RAIL_ENTRIES: readonly RailEntry[] = [pixRail, boletoRail, tedRail, cryptoRail];

/** Every rail's name, in the registry's order (the API's enum of `fundingInstruction.rail`). */
export const RAILS: readonly string[] = RAIL_ENTRIES.map((e) => e.rail);

export const railEntry = (rail: string): RailEntry | undefined => RAIL_ENTRIES.find((e) => e.rail === rail);

/** Whether `rail` is a rail that pays in `asset`. */
export const railAccepts = (rail: string, asset: string): boolean => !!railEntry(rail)?.assets.includes(asset);

/** A reference an operator typed for `rail`, in the form the rail's records carry it (decision 0222). */
export const railReference = (rail: string, typed: string): string => railEntry(rail)?.reference?.(typed) ?? typed;

/** The asset a rail's provider reports amounts in (its first). */
export const railAsset = (rail: string): string | undefined => railEntry(rail)?.assets[0];

/** The statement transaction type of money that came in on `rail` (PIX_KEY: PIX). */
export const railTransactionType = (rail: string): string => railEntry(rail)?.transactionType ?? rail;

/**
 * The rails whose payments an operator records from the bank statement (`cambio payment record`): those without a
 * connector, those whose operators may always record (TED), and, given a configuration, those whose connector has no
 * provider in it (BOLETO without a bank). Without a configuration: every rail an operator may record on some
 * deployment.
 */
export const manualRails = (config?: Config): string[] =>
  RAIL_ENTRIES.filter(
    (e) =>
      e.recordedBy === 'operator' ||
      e.operatorMayRecord ||
      (e.operatorWithoutProvider && !(config && e.hasProvider(config))),
  ).map((e) => e.rail);

/** The funding instruction's field that names a deposit's charge on `rail` (PIX: `txid`; BOLETO: `seuNumero`). */
export const chargeField = (rail: string): string => railEntry(rail)?.chargeField ?? 'txid';

/** The rails whose provider this process has: a deployment's origin on each is its first start with it. */
export function providerRails(config: Config): string[] {
  return RAIL_ENTRIES.filter((e) => e.hasProvider(config)).map((e) => e.rail);
}

/** What /readyz shows per rail: a provider, or operators recording what the bank statement shows. */
export function railStatus(config: Config): Record<string, string> {
  const status = (e: RailEntry) =>
    e.hasProvider(config)
      ? 'psp'
      : e.recordedBy === 'operator' || e.operatorMayRecord || e.operatorWithoutProvider
        ? 'manual'
        : 'not configured';
  return Object.fromEntries(RAIL_ENTRIES.map((e) => [e.rail, status(e)]));
}

/** The rails of one process: the registry's entries and the connectors its configuration gives them. */
export class Rails {
  private readonly connectors: ReadonlyMap<string, RailConnector>;

  constructor(
    readonly entries: readonly RailEntry[],
    connectors: Iterable<RailConnector>,
  ) {
    this.connectors = new Map([...connectors].map((c) => [c.rail, c]));
  }

  /** The connector of `rail`; undefined when this process has no provider for it (RAIL_NOT_CONFIGURED). */
  connector(rail: string): RailConnector | undefined {
    return this.connectors.get(rail);
  }

  /** The rail whose notice URLs carry `slug` (`/rails/{slug}/...`), lower case. */
  bySlug(slug: string): RailEntry | undefined {
    return this.entries.find((e) => e.slug === slug);
  }

  all(): RailConnector[] {
    return [...this.connectors.values()];
  }

  async close(): Promise<void> {
    await Promise.all(this.all().map(async (c) => c.close?.()));
  }
}

/** The connectors this configuration has, from `entries` (the registry's; a test may pass its own). */
export function railsFromConfig(
  config: Config,
  entries: readonly RailEntry[] = RAIL_ENTRIES,
  stores: RailStores = {},
): Rails {
  const connectors = entries.flatMap((e) => e.connector?.(config, stores) ?? []);
  return new Rails(entries, connectors);
}

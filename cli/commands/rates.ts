import type { Command } from 'commander';
import { withServices, output } from '../context';
import { ASSETS, type AssetCode, isAssetCode } from '../../domain/assets';
import { CambioError } from '../../domain/errors';
import { systemEm } from '../../db/orm';
import { latestExchangeRates, ratesClock } from '../../db/repositories/exchange-rates';
import { currentRates } from '../../services/rates';

const ageOf = (at: Date | null, now: number) => (at ? Math.max(0, Math.round((now - at.getTime()) / 1000)) : null);
const age = (seconds: number | null) => (seconds === null ? '-' : `${seconds}s`);

/**
 * `cambio rates [--base USD]`: what GET /api/rates answers (the mids new quotes would use now, from this deployment's
 * RATES_SOURCES), and, per source, when a poll last received it and how old its latest rate is.
 */
export function ratesCommands(program: Command): void {
  program
    .command('rates')
    .description("the mid rates quotes would use now, each with its source and age, and each source's last poll")
    .option('--base <asset>', 'the asset the mids are per 1 unit of', 'USD')
    .option('--json', 'print JSON')
    .action(async (opts: { base: string; json?: boolean }) => {
      if (!isAssetCode(opts.base)) {
        throw new CambioError('VALIDATION_ERROR', `--base must be one of ${ASSETS.join(', ')}`);
      }
      const base: AssetCode = opts.base;
      const result = await withServices(async (s) => {
        const polled = s.config.rates.sources.filter((n) => n !== 'table');
        const em = systemEm(s.orm);
        const rows = await latestExchangeRates(em, polled, ASSETS);
        // Ages by the database's clock, as the API judges them (0298): an operator's laptop may be minutes off.
        const now = (await ratesClock(em)).getTime();
        const sources = polled.map((name) => {
          const own = rows.filter((r) => r.source === name);
          const latest = (pick: (r: (typeof own)[number]) => Date) =>
            own.length ? new Date(Math.max(...own.map((r) => pick(r).getTime()))) : null;
          const receivedAt = latest((r) => r.receivedAt);
          const sourceTime = latest((r) => r.sourceTime);
          return {
            source: name,
            role: name === s.config.rates.sources[0] ? 'primary' : 'reference',
            currencies: own.length,
            lastReceivedAt: receivedAt?.toISOString() ?? null,
            receivedAgeSeconds: ageOf(receivedAt, now),
            latestSourceTime: sourceTime?.toISOString() ?? null,
            sourceAgeSeconds: ageOf(sourceTime, now),
          };
        });
        const view = await currentRates(s.rates, base);
        const rates = view.rates.map((r) => ({
          ...r,
          ageSeconds: ageOf(r.sourceTime ? new Date(r.sourceTime) : null, now),
        }));
        return { base, sources, rates };
      });
      const lines = [
        result.sources.length
          ? result.sources
              .map(
                (x) =>
                  `${x.source} (${x.role})  ${x.currencies} currencies  received ${age(x.receivedAgeSeconds)} ago` +
                  `  latest rate ${age(x.sourceAgeSeconds)} old`,
              )
              .join('\n')
          : 'no polled source (RATES_SOURCES): quotes price from the sandbox table, or not at all outside a sandbox',
        '',
        ...result.rates.map((r) =>
          r.mid === null
            ? `${base}/${r.asset}  unavailable: ${r.unavailable}`
            : `${base}/${r.asset}  ${r.mid}  ${r.source}  ${r.sourceTime ?? '-'}  age ${age(r.ageSeconds)}`,
        ),
      ];
      output(Boolean(opts.json), result, lines.join('\n'));
    });
}

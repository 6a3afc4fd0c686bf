import type { Command } from 'commander';
import { systemEm } from '../../db/orm';
import { checkBooks, type AssetBooks } from '../../payments/books-check';
import { withServices } from '../context';
import { isAssetCode } from '../../domain/assets';
import { CambioError } from '../../domain/errors';

const human = (a: AssetBooks) => {
  const r = a.records;
  const l = a.ledger;
  const lines = [
    `${a.asset} ${a.differences.length ? 'DIFFERS' : 'ok'}`,
    `  records: received ${r.received} = matched ${r.matched} + matched pending ${r.matchedPending}` +
      ` + unmatched ${r.unmatched} + returning ${r.returning} + returned ${r.returned} + credited ${r.credited}` +
      ` + undecided ${r.undecided}; suspense ${r.suspense}`,
    `  ledger:  received ${l.received}, matched ${l.matched}, credited ${l.credited}, returned ${l.returned};` +
      ` suspense ${l.balance} (entries ${l.entries})`,
    ...a.differences.map((d) => `  DIFFERENCE ${d}`),
  ];
  return lines.join('\n');
};

/** Decision 0076: the books close by a query an operator can run at any time. */
export function booksCommands(program: Command): void {
  const books = program.command('books').description('the books of inbound payments');
  books
    .command('check')
    .description(
      'per asset: received = matched + unmatched + returning + returned + credited, and the suspense, ' +
        'from the records and from the ledger; exits 1 on any difference',
    )
    .option('--asset <asset>', 'only this asset')
    .option('--json', 'print JSON')
    .action(async (opts: { asset?: string; json?: boolean }) => {
      // Assets are stored by their code: another spelling reads no row, and "no payments" would pass for closed books.
      if (opts.asset !== undefined && !isAssetCode(opts.asset)) {
        const errors = [{ path: '--asset', message: 'is not an asset Cambio knows (a code in capitals, e.g. BRL)' }];
        throw new CambioError('VALIDATION_ERROR', `--asset "${opts.asset}" is not an asset Cambio knows`, { errors });
      }
      const result = await withServices((s) => checkBooks(systemEm(s.orm), opts.asset));
      console.log(opts.json ? JSON.stringify(result, null, 2) : result.assets.map(human).join('\n') || 'no payments');
      if (!result.ok) process.exitCode = 1;
    });
}

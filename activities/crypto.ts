// The CRYPTO deposit scanner's activity (payments/crypto-scan.ts), on the rails' task queue: it waits on the EVM
// node and holds no transaction while it does. A node that is down fails the run, which Temporal retries; the next
// scheduled run goes on from the cursor either way.
import { ApplicationFailure, Context } from '@temporalio/activity';
import { scanCryptoDeposits, type ScanResult } from '../payments/crypto-scan';
import { CryptoRail, railsFromConfig } from '../rails';
import { CRYPTO_RAIL } from '../rails/crypto';
import type { ActivityDeps } from './deps';

export function createCryptoActivities(deps: ActivityDeps) {
  return {
    async scanCryptoChain(): Promise<ScanResult> {
      const rails = deps.rails ?? railsFromConfig(deps.config);
      const rail = rails.connector(CRYPTO_RAIL);
      if (!(rail instanceof CryptoRail)) {
        throw ApplicationFailure.nonRetryable('no EVM node is configured on this worker (EVM_RPC_URL)');
      }
      const ctx = Context.current();
      const settle = { orm: deps.orm, temporal: deps.temporal, config: deps.config };
      const result = await scanCryptoDeposits(settle, rail, { onProgress: () => ctx.heartbeat() });
      if (result.unholdable.length) {
        ctx.log.warn('crypto scan: transfers to deposit addresses too large for any balance, not recorded', {
          transfers: result.unholdable,
        });
      }
      if (result.misshapen.length) {
        ctx.log.warn("crypto scan: logs of a listed token with Transfer's topic in another shape, not recorded", {
          logs: result.misshapen,
        });
      }
      if (result.seen || result.confirmed || result.dropped) ctx.log.info('crypto scan', { ...result });
      return result;
    },
  };
}

export type CryptoActivities = ReturnType<typeof createCryptoActivities>;

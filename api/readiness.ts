import { READINESS_PROBE_TIMEOUT_MS } from '../db/repositories/readiness-and-metrics';
import type { ServiceContext } from '../services/context';

export type CheckResult = 'ok' | 'unavailable';
export interface ReadinessChecks {
  postgres: CheckResult;
  temporal: CheckResult;
}

/**
 * Readiness of the API's dependencies, probed at most once per `cacheMs` and shared by concurrent callers. A probe
 * that has not answered within READINESS_PROBE_TIMEOUT_MS (800 ms, so that /readyz answers within 1 s whatever is
 * down) counts as unavailable, and a probe still hanging is not started again (a dead Postgres would otherwise
 * collect one pending pool acquire per scrape).
 */
export class Readiness {
  private last?: { at: number; checks: ReadinessChecks };
  private probing?: Promise<ReadinessChecks>;
  private postgresPending = false;
  private temporalPending = false;

  constructor(
    private readonly services: Pick<ServiceContext, 'databaseProbe' | 'temporal'>,
    private readonly cacheMs: number,
  ) {}

  async check(): Promise<ReadinessChecks> {
    if (this.last && Date.now() - this.last.at < this.cacheMs) return this.last.checks;
    this.probing ??= this.probe().finally(() => {
      this.probing = undefined;
    });
    return this.probing;
  }

  private async probe(): Promise<ReadinessChecks> {
    const { databaseProbe, temporal } = this.services;
    const [postgres, temporalResult] = await Promise.all([
      this.bounded('postgres', () => databaseProbe.ping()),
      // The deadline also ends the client's own retries, which would otherwise outlive the probe.
      this.bounded('temporal', () =>
        temporal.connection.withDeadline(Date.now() + READINESS_PROBE_TIMEOUT_MS, () =>
          // The namespace's description, not just the server's: a namespace that does not exist is not ready.
          temporal.connection.workflowService.describeNamespace({ namespace: temporal.options.namespace }),
        ),
      ),
    ]);
    const checks = { postgres, temporal: temporalResult };
    this.last = { at: Date.now(), checks };
    return checks;
  }

  private bounded(which: 'postgres' | 'temporal', probe: () => Promise<unknown>): Promise<CheckResult> {
    const flag = which === 'postgres' ? 'postgresPending' : 'temporalPending';
    if (this[flag]) return Promise.resolve('unavailable');
    this[flag] = true;
    const running = Promise.resolve()
      .then(probe)
      .then(
        () => 'ok' as const,
        () => 'unavailable' as const,
      )
      .finally(() => {
        this[flag] = false;
      });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<CheckResult>((resolve) => {
      timer = setTimeout(() => resolve('unavailable'), READINESS_PROBE_TIMEOUT_MS);
    });
    return Promise.race([running, timeout]).finally(() => clearTimeout(timer));
  }
}

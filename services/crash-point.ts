// Fault injection for the crash tests: a real process death at an exact point of a mutating request, which no
// signal sent from outside can hit. Read here rather than in config/index.ts on purpose: it is not a setting,
// it is ignored when NODE_ENV=production, and nothing but test/integration sets it.
// 'after-payment-record': between recording an inbound payment and having it decided (the CLI's `deposit pay`).
// 'after-decision-read': a worker that has read a decision for its workflow, inside the workflow task, and has not
// acted on it yet.
export type CrashPoint = 'before-commit' | 'after-commit' | 'after-payment-record' | 'after-decision-read';

const armed =
  process.env.NODE_ENV === 'production' ? undefined : (process.env.CAMBIO_TEST_CRASH_AT as CrashPoint | undefined);

/** SIGKILLs this process when `CAMBIO_TEST_CRASH_AT` names `point`: no handler, no flush, no goodbye. */
export function crashPoint(point: CrashPoint): void {
  if (armed === point) process.kill(process.pid, 'SIGKILL');
}

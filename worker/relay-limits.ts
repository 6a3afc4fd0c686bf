// The claim sizes both outbox relays use (workflow-start-relay.ts for starts, workflow-signal-relay.ts for
// signals), in a module of their own so that neither relay imports the other for them.

/** How many rows one relay pass claims at most. */
export const RELAY_BATCH = 50;

// A pass's starts must end well within its lease, or another relay could claim the same rows while they run
// (harmless, the starts are idempotent, but wasted): each start gets START_DEADLINE_MS, the lease three times that.
export const START_DEADLINE_MS = 5_000;
export const RELAY_LEASE_MS = 15_000;

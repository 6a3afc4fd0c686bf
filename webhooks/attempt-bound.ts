import type { Config } from '../config';

// An attempt cut short is not stopped at once where it ran: its POST runs on until its own timeout
// (WEBHOOK_TIMEOUT_SECONDS, counted after the URL check's bounded DNS lookups) or until a heartbeat tells it that it
// was cancelled, and a worker whose heartbeats stopped reaching Temporal (a partition, a stalled event loop) never
// hears that. Half a minute past the timeout covers both with room.
const ATTEMPT_OPEN_MARGIN_SECONDS = 30;

/**
 * How long after it began an attempt that never finished may still be in flight at its receiver: until then no other
 * attempt of its delivery starts (decisions.md, "at most one attempt of a delivery is in flight"; decision 0343).
 */
export const attemptMayBeOpenSeconds = (config: Pick<Config, 'webhookTimeoutSeconds'>): number =>
  config.webhookTimeoutSeconds + ATTEMPT_OPEN_MARGIN_SECONDS;

import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Rails } from '../rails';
import type { NoticeCapability, RailEntry } from '../rails/rail';

// At start, a worker of the rails' queue tells the provider of every rail whose connector takes notices where to send
// them (PIX: `PUT /webhook/{PIX_RECEIVING_KEY}`; the same URL every time, so registering again changes nothing). A
// provider that is down then must not stop the worker, whose payouts wait on the same provider anyway: each
// registration retries in the background until it lands, and says so in the log. Meanwhile no notice arrives; the
// deposits' payments wait at the provider for it.

const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 60_000;

type NoticeEntry = RailEntry & { notices: NonNullable<RailEntry['notices']> };

/**
 * Where a rail's provider POSTs notices (it appends the entry's suffix, PIX's `/pix`): PUBLIC_BASE_URL, the rail's
 * slug and its secret token (PIX: PIX_WEBHOOK_TOKEN), the one route api/rail-notices.ts serves.
 */
export const noticeUrl = (config: Config, entry: NoticeEntry): string =>
  `${config.publicBaseUrl}/rails/${entry.slug}/${encodeURIComponent(entry.notices.token(config))}`;

export interface Registration {
  /** Settles once the PSP took the URL (never rejects; stop() leaves it pending). */
  done: Promise<void>;
  stop(): void;
}

/** Every rail of `rails` (the registry's) that takes notices and has a provider here, kept registered. */
export function keepRailNoticesRegistered(rails: Rails, config: Config, log: Logger): Registration {
  const registrations = rails.entries.flatMap((entry) => {
    const notices = rails.connector(entry.rail)?.notices;
    if (!entry.notices || !notices) return [];
    return [keepNoticesRegistered({ rail: entry.rail, notices }, noticeUrl(config, entry as NoticeEntry), log)];
  });
  return {
    done: Promise.all(registrations.map((r) => r.done)).then(() => undefined),
    stop() {
      for (const r of registrations) r.stop();
    },
  };
}

/** One rail's registration at `url`, retried (1 s doubling to 60 s) until its provider takes it or stop(). */
export function keepNoticesRegistered(
  rail: { rail: string; notices: NoticeCapability },
  url: string,
  log: Logger,
): Registration {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const done = (async () => {
    for (let attempt = 1, wait = FIRST_RETRY_MS; !stopped; attempt++, wait = Math.min(wait * 2, MAX_RETRY_MS)) {
      try {
        await rail.notices.registerNotices(url);
        log.info({ rail: rail.rail, url: url.replace(/\/[^/]+$/, '/…') }, 'PSP notices registered');
        return;
      } catch (err) {
        log.warn(
          { err: (err as Error).message, rail: rail.rail, attempt, retryInMs: wait },
          'PSP notice registration failed; retrying in the background',
        );
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, wait);
      });
    }
    await new Promise<never>(() => undefined);
  })();
  return {
    done,
    stop() {
      stopped = true;
      clearTimeout(timer);
      wake?.();
    },
  };
}

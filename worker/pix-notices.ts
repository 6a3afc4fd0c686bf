import type { Logger } from 'pino';
import type { Config } from '../config';
import type { NoticeCapability, RailConnector, RailEntry } from '../rails/rail';

// At start, a worker of the rails' queue tells the PSP where to send notices (`PUT /webhook/{PIX_RECEIVING_KEY}`:
// the same URL every time, so registering again changes nothing). A PSP that is down then must not stop the
// worker, whose payouts wait on the same PSP anyway: the registration retries in the background until it lands,
// and says so in the log. Meanwhile no notice arrives; the deposits' payments wait at the PSP for it.

const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 60_000;

/** Where the PSP POSTs notices (it appends `/pix`): PUBLIC_BASE_URL and the secret PIX_WEBHOOK_TOKEN. */
export const pixNoticeUrl = (config: Config): string =>
  `${config.publicBaseUrl}/rails/pix/${encodeURIComponent(config.pix.webhookToken)}`;

/** Where a rail's provider POSTs notices: `{PUBLIC_BASE_URL}/rails/{slug}/{token}` (it appends its suffix). */
export const railNoticeUrl = (config: Config, entry: RailEntry): string =>
  `${config.publicBaseUrl}/rails/${entry.slug}/${encodeURIComponent(entry.notices!.token(config))}`;

export interface Registration {
  /** Settles once the PSP took the URL (never rejects; stop() leaves it pending). */
  done: Promise<void>;
  stop(): void;
}

export function keepNoticesRegistered(
  rail: RailConnector & { notices: NoticeCapability },
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

// How config/ and each rail's config (rails/*/config.ts) read one environment variable.

/** An RFC 3339 instant with its offset (`2026-12-01T00:00:00Z`); unset: undefined. */
export const instant = (v: string | undefined, name: string): Date | undefined => {
  if (v === undefined || v === '') return undefined;
  const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
  const at = new Date(v);
  if (!rfc3339.test(v) || Number.isNaN(at.getTime())) {
    throw new Error(`${name} must be an RFC 3339 instant with its offset (e.g. 2026-12-01T00:00:00Z), got "${v}"`);
  }
  return at;
};

export const int = (v: string | undefined, fallback: number, name: string) => {
  if (v === undefined || v === '') return fallback;
  // Past 2^53 a number is no longer exact: "99999999999999999999" would become a time no Date can hold.
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)))
    throw new Error(`${name} must be a whole number, got "${v}"`);
  return Number.parseInt(v, 10);
};

/** `int` within [min, max]: a value outside would make the setting meaningless (a quote expired as it is made). */
export const intWithin = (v: string | undefined, fallback: number, name: string, min: number, max: number) => {
  const n = int(v, fallback, name);
  if (n < min || n > max) throw new Error(`${name} must be between ${min} and ${max}, got "${v}"`);
  return n;
};

/** `1`, `true`, `yes` or `on` (any case); unset or empty: the fallback. */
export const bool = (v: string | undefined, fallback: boolean) =>
  v === undefined || v === '' ? fallback : ['1', 'true', 'yes', 'on'].includes(v.toLowerCase());

/**
 * `value` in sandbox mode only (SANDBOX read as config/index.ts reads it): the fallback to compose's simulated
 * provider, so that a deployment outside sandbox is never pointed at a simulator by a default.
 */
export const sandboxOnly = (env: NodeJS.ProcessEnv, value: string | undefined): string | undefined =>
  bool(env.SANDBOX, false) ? value || undefined : undefined;

/**
 * An http(s) base address (no query, no fragment), as the URL parser writes it, without its trailing slash; undefined
 * when unset; anything else stops the process.
 */
export function httpBaseUrl(value: string | undefined, name: string): string | undefined {
  if (!value) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(value.trim());
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
    throw new Error(`${name} must be an http or https base URL (no query or fragment), got "${value}"`);
  }
  return url.href.replace(/\/+$/, '');
}

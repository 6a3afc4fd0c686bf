import { Resolver } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { CambioError } from '../domain/errors';

/** Every address a host name resolves to. Injectable so tests can make a name resolve to a private address. */
export type ResolveHost = (host: string) => Promise<string[]>;

// A name server that does not answer costs one lookup at most this long (c-ares doubles the wait at each try).
const DNS_TIMEOUT_MS = 1500;
const DNS_TRIES = 2;
// The resolver's answers that say the name has no address: anything else (EAI_AGAIN, ETIMEOUT, ESERVFAIL, a refused
// connection to the resolver) says only that DNS did not answer now.
const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME', 'EAI_NONAME', 'EAI_NODATA']);

/**
 * Resolves through c-ares (`dns.Resolver`), each lookup bounded (DNS_TIMEOUT_MS, DNS_TRIES), never through the
 * system's `getaddrinfo`: that one runs in libuv's small thread pool, shared by every lookup of the process, without
 * a timeout, so one customer's name server that never answers would hold up every other customer's deliveries
 * (decision 0166). `servers` (host:port) is for tests; the system's name servers otherwise.
 */
export function resolverOf(servers?: string[]): ResolveHost {
  const resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: DNS_TRIES });
  if (servers) resolver.setServers(servers);
  return async (host) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const addresses = [v4, v6].flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
    if (addresses.length > 0) return addresses;
    const errors = [v4, v6].map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }) : undefined));
    // No address: the name does not exist only when both answers say so; a timeout of either says nothing.
    throw errors.find((e) => e && !NO_SUCH_NAME.has(e.code ?? '')) ?? errors.find((e) => e) ?? nothingFor(host);
  };
}

const nothingFor = (host: string) => Object.assign(new Error(`${host} has no address`), { code: 'ENODATA' });

export const dnsResolve: ResolveHost = resolverOf();

export interface UrlPolicy {
  allowPrivate: boolean;
  resolve: ResolveHost;
}

/** A URL that passed the rules, with the address it was checked against (the attempt connects to that one). */
export interface CheckedUrl {
  url: URL;
  /** Undefined when private URLs are allowed: then the connection resolves the name itself. */
  address?: string;
}

// Not reachable from the public internet, or not meant to be (RFC 6890 special-purpose ranges).
const NOT_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOT_PUBLIC.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  // The unspecified and loopback addresses, and the IPv4-compatible ones (::a.b.c.d, deprecated): ::7f00:1 is
  // 127.0.0.1 to a stack that still routes them.
  ['::', 96],
  // IPv4-translated addresses (::ffff:0:a.b.c.d, RFC 2765).
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC.addSubnet(net, prefix, 'ipv6');

/** The IPv4 address two hexadecimal groups of an IPv6 address carry. */
function ipv4Of(high: string, low: string): string {
  const hi = Number.parseInt(high, 16);
  const lo = Number.parseInt(low, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6) {
    // An IPv4-mapped or -compatible address is judged by the IPv4 address it carries.
    const mapped = /^::(ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return isPublicAddress(mapped[2]);
    const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
    if (hexMapped) return isPublicAddress(ipv4Of(hexMapped[1], hexMapped[2]));
    // 6to4 (2002::/16) carries an IPv4 address in its second and third groups: 2002:7f00:1:: is 127.0.0.1's.
    const sixToFour = /^2002:([0-9a-f]{1,4}):([0-9a-f]{1,4})(:|$)/i.exec(address);
    if (sixToFour && !isPublicAddress(ipv4Of(sixToFour[1], sixToFour[2]))) return false;
    return !NOT_PUBLIC.check(address, 'ipv6');
  }
  return !NOT_PUBLIC.check(address, 'ipv4');
}

// What DNS can carry (RFC 1035 2.3.4): labels of 1 to 63 octets, 253 at most in all (without the root's dot). A
// longer or empty label is refused by c-ares itself (EBADNAME) before any query: the URL's fault, not a resolver
// down, so it is checked here and named as such (decision 0190).
const MAX_LABEL = 63;
const MAX_NAME = 253;

function isDnsName(host: string): boolean {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  return (
    name.length > 0 && name.length <= MAX_NAME && name.split('.').every((l) => l.length > 0 && l.length <= MAX_LABEL)
  );
}

const refuse = (url: string, why: string) => new CambioError('INVALID_WEBHOOK_URL', `webhook url ${why}`, { url });

const DNS_RETRY_AFTER_SECONDS = 5;

/**
 * A name the resolver says does not exist is the URL's fault (400, the key keeps it); a resolver that does not answer
 * now is a dependency down (503 with Retry-After, which the key does not keep: the retry resolves again).
 */
function unresolved(url: string, host: string, err: unknown): CambioError {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && NO_SUCH_NAME.has(code)) return refuse(url, `host ${host} does not resolve`);
  // The resolver refused the name without asking anyone: no retry will resolve it.
  if (code === 'EBADNAME') return refuse(url, `host ${host} is not a valid host name`);
  return new CambioError('SERVICE_UNAVAILABLE', `the host ${host} could not be resolved now (${String(code ?? err)})`, {
    retryAfterSeconds: DNS_RETRY_AFTER_SECONDS,
  });
}

/**
 * The URL rules (decision 0029): `https://` to a host whose every resolved address is public.
 * Run at create, at PATCH and before each attempt, after resolution, so a name that later points at 10.x or
 * 169.254.169.254 is refused then. With `allowPrivate` (local work) `http://` and any host are accepted.
 */
export async function checkWebhookUrl(raw: string, policy: UrlPolicy): Promise<CheckedUrl> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse(raw, 'is not a valid absolute URL');
  }
  const schemes = policy.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol))
    throw refuse(raw, `must use ${policy.allowPrivate ? 'http:// or https://' : 'https://'}`);
  if (url.username || url.password) throw refuse(raw, 'must not carry credentials');
  if (!url.hostname) throw refuse(raw, 'has no host');
  // Port 0 is no port a receiver can listen on (the URL parser already refuses 65536 and above).
  if (url.port === '0') throw refuse(raw, 'must not name port 0');
  if (policy.allowPrivate) return { url };
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!isIP(host) && !isDnsName(host)) throw refuse(raw, `host ${host} is not a valid host name`);
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : await policy.resolve(host);
  } catch (err) {
    throw unresolved(raw, host, err);
  }
  if (addresses.length === 0) throw refuse(raw, `host ${host} does not resolve`);
  const blocked = addresses.find((a) => !isPublicAddress(a));
  if (blocked) throw refuse(raw, `host ${host} resolves to the non-public address ${blocked}`);
  return { url, address: addresses[0] };
}

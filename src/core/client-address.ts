/**
 * Whom the hub believes about the client address. Fastify's `req.ip` and `req.protocol` read
 * X-Forwarded-For / X-Forwarded-Proto only from a peer this rule trusts, so every reader of the
 * client address (rate limits, the lockout ledger, last-login IP, audit entries, the Secure
 * cookie decision) follows this one rule.
 */
import type { IncomingHttpHeaders } from 'node:http';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/** `none`: never believe forwarded headers; `all`: believe any peer; `list`: believe these proxies. */
export type TrustProxy =
  { readonly kind: 'none' } | { readonly kind: 'all' } | { readonly kind: 'list'; readonly entries: readonly string[] };

/** The default: a reverse proxy on the same host, nothing else. */
export const LOOPBACK = ['127.0.0.0/8', '::1/128'] as const;

const KEYWORDS: Record<string, readonly string[]> = { loopback: LOOPBACK };

/**
 * Reads TRUST_PROXY: `false`, `true`, or a comma list of addresses, CIDRs and the keyword
 * `loopback`. Returns an error message for an entry that is neither.
 */
export function parseTrustProxy(raw: string | undefined): TrustProxy | string {
  if (raw === undefined || raw.trim() === '') return { kind: 'list', entries: [...LOOPBACK] };
  const value = raw.trim();
  if (value === 'false') return { kind: 'none' };
  if (value === 'true') return { kind: 'all' };
  const entries = parseAddressList(value);
  if (typeof entries === 'string') return entries;
  if (entries.length === 0) return 'name at least one proxy address, or use false';
  return { kind: 'list', entries };
}

/**
 * A comma list of addresses, CIDRs and the keyword `loopback` (TRUST_PROXY, METRICS_ALLOW) as
 * CIDRs; empty or unset gives none. Returns an error message for an entry that is neither.
 */
export function parseAddressList(raw: string | undefined): string[] | string {
  const entries: string[] = [];
  for (const item of (raw ?? '').split(',').map((s) => s.trim())) {
    if (item === '') continue;
    if (KEYWORDS[item]) {
      entries.push(...KEYWORDS[item]);
      continue;
    }
    const [address, bits] = item.split('/');
    const family = net.isIP(address);
    const cidr = family === 0 ? null : `${address}/${bits ?? (family === 4 ? 32 : 128)}`;
    if (cidr === null || !ipaddr.isValidCIDR(cidr)) return `"${item}" is not an address, a CIDR or "loopback"`;
    entries.push(cidr);
  }
  return entries;
}

/** Whether an address lies in one of the CIDRs (an IPv4-mapped IPv6 address matched as IPv4). */
export function addressIn(entries: readonly string[]): (address: string) => boolean {
  const ranges = entries.map((e) => ipaddr.parseCIDR(e));
  return (address: string) => {
    const ip = normalise(address);
    return ip !== null && ranges.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits));
  };
}

/** An IPv4-mapped IPv6 peer (::ffff:127.0.0.1, a dual-stack socket) is matched as IPv4. */
function normalise(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (net.isIP(address) === 0) return null;
  const parsed = ipaddr.parse(address);
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? (parsed as ipaddr.IPv6).toIPv4Address() : parsed;
}

/**
 * Cuts X-Forwarded-For at its nearest entry that is not an IP address (garbage, a host name, an
 * address with a port): that entry and every one before it are dropped, so no such value is ever
 * taken as the client address. The trust walk then ends at the last real address, which is the
 * socket peer when the nearest entry is the bad one. Runs before anything reads `req.ip`.
 */
export function keepAddressForwards(headers: IncomingHttpHeaders): void {
  const raw = headers['x-forwarded-for'];
  if (raw === undefined) return;
  const entries = (Array.isArray(raw) ? raw.join(',') : raw).split(',').map((e) => e.trim());
  let first = entries.length;
  while (first > 0 && net.isIP(entries[first - 1]) !== 0) first--;
  if (first === 0) return;
  if (first === entries.length) delete headers['x-forwarded-for'];
  else headers['x-forwarded-for'] = entries.slice(first).join(', ');
}

/**
 * The key an abuse limit counts a client address under: an IPv6 client by its /64 (one household
 * or host is routinely given a whole /64, so per-address keys would let it rotate freely), an
 * IPv4 or IPv4-mapped client by its address. Anything that is not an address (a user id, a
 * composite key) is returned as it is.
 */
export function limitKey(key: string): string {
  if (net.isIP(key) !== 6) return key;
  const ip = ipaddr.parse(key) as ipaddr.IPv6;
  if (ip.isIPv4MappedAddress()) return ip.toIPv4Address().toString();
  const prefix = ip.parts.slice(0, 4).map((p) => p.toString(16));
  return `${prefix.join(':')}::/64`;
}

/**
 * The value for Fastify's `trustProxy`: a predicate over each hop, from the socket peer
 * inwards. A hop is believed only when the address that handed it over is trusted.
 */
export function trustPredicate(rule: TrustProxy): boolean | ((address: string, hop: number) => boolean) {
  if (rule.kind === 'none') return false;
  if (rule.kind === 'all') return true;
  const trusted = addressIn(rule.entries);
  return (address: string) => trusted(address);
}

/** For the start-up log: which peers may name the client address. */
export function describeTrustProxy(rule: TrustProxy): string {
  if (rule.kind === 'none') return 'client addresses: the socket peer only (TRUST_PROXY=false)';
  if (rule.kind === 'all')
    return 'client addresses: X-Forwarded-For from ANY peer (TRUST_PROXY=true; only safe behind a proxy that is the sole way in)';
  return `client addresses: X-Forwarded-For believed from ${rule.entries.join(', ')}`;
}

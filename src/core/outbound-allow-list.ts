/**
 * OUTBOUND_ALLOW_HOSTS (and its older name WEBHOOK_ALLOW_HOSTS) and the address policy: public
 * unicast only, unless the operator lists a host name, an address or a range (a LAN receiver, a
 * local mirror, a test server).
 */
import net from 'node:net';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

export interface AllowList {
  readonly names: ReadonlySet<string>;
  readonly ranges: ReadonlyArray<readonly [Address, number]>;
}

// ipaddr.js calls these 'unicast', yet they embed an IPv4 address a gateway may translate to.
const ALSO_REFUSED = [ipaddr.parseCIDR('::/96'), ipaddr.parseCIDR('64:ff9b:1::/48')];
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/i;

export const bare = (host: string): string => host.replace(/^\[(.*)\]$/, '$1');
export const nameKey = (host: string): string => host.toLowerCase().replace(/\.$/, '');

/** Reads OUTBOUND_ALLOW_HOSTS: comma-separated host names, addresses and CIDRs. */
export function parseAllowList(spec: string): AllowList {
  const names = new Set<string>();
  const ranges: Array<readonly [Address, number]> = [];
  for (const raw of spec.split(',')) {
    const entry = bare(raw.trim());
    if (entry === '') continue;
    const [address, bits, extra] = entry.split('/');
    const family = net.isIP(address);
    if (family !== 0) {
      const max = family === 4 ? 32 : 128;
      const n = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
      if (extra !== undefined || !(n >= 0 && n <= max)) throw new Error(`OUTBOUND_ALLOW_HOSTS: "${raw.trim()}" is not a valid CIDR`);
      ranges.push([ipaddr.parse(address), n]);
    } else if (bits === undefined && HOST_NAME.test(entry.replace(/\.$/, ''))) {
      names.add(nameKey(entry));
    } else {
      throw new Error(`OUTBOUND_ALLOW_HOSTS: "${raw.trim()}" is not a host name, an address or a CIDR`);
    }
  }
  return { names, ranges };
}

/** Both lists at once: what the operator listed in the environment and what a hub admin listed in the dashboard. */
export function mergeAllowLists(a: AllowList, b: AllowList): AllowList {
  return { names: new Set([...a.names, ...b.names]), ranges: [...a.ranges, ...b.ranges] };
}

/** Why a list cannot be read (its first bad entry), or null: the check of the hub setting outbound_allow_hosts. */
export function allowListProblem(spec: string): string | null {
  try {
    parseAllowList(spec);
    return null;
  } catch (err) {
    return (err as Error).message.replace(/^OUTBOUND_ALLOW_HOSTS: /, '');
  }
}

/** Public unicast, or listed by the operator. IPv4-mapped IPv6 is judged as the IPv4 address it carries. */
export function isAddressAllowed(address: string, allow: AllowList): boolean {
  if (net.isIP(address) === 0) return false;
  const ip = ipaddr.process(address);
  if (allow.ranges.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits))) return true;
  if (ip.range() !== 'unicast') return false;
  return !ALSO_REFUSED.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits));
}

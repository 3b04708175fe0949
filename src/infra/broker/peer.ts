/**
 * Whom a broker login comes from, for the refused-login limit (issue 33 item 6). A TCP client is
 * its socket peer. A WebSocket client behind the TLS proxy the protocol recommends (wss on 443)
 * is named by the proxy's X-Forwarded-For, believed hop by hop under the hub's TRUST_PROXY rule
 * exactly as Fastify believes it for HTTP (src/core/client-address.ts), so a proxy does not make
 * every satellite one address.
 */
import net from 'node:net';
import type { IncomingMessage } from 'node:http';
import { trustPredicate, type TrustProxy } from '../../core/client-address.ts';

export type PeerAddress = (socketPeer: string | undefined, upgrade: IncomingMessage | undefined) => string;

/**
 * The client address: the socket peer, or for a WebSocket upgrade the nearest X-Forwarded-For
 * entry not handed over by a trusted proxy (proxy-addr's walk, which Fastify runs). An entry that
 * is no address ends the walk at the proxy that wrote it.
 */
export function peerAddressRule(rule: TrustProxy): PeerAddress {
  const trust = trustPredicate(rule);
  const trusted = typeof trust === 'function' ? trust : () => trust;
  return (socketPeer, upgrade) => {
    const peer = socketPeer ?? upgrade?.socket?.remoteAddress ?? 'unknown';
    const header = upgrade?.headers['x-forwarded-for'];
    if (!upgrade || !header) return peer;
    const hops = [
      peer,
      ...(Array.isArray(header) ? header.join(',') : header)
        .split(',')
        .map((s) => s.trim())
        .reverse(),
    ];
    let at = 0;
    while (at < hops.length - 1 && trusted(hops[at], at) && net.isIP(hops[at + 1]) !== 0) at++;
    return hops[at];
  };
}

/**
 * What the alert tests share: a signature-checking receiver and a WebSocket that keeps the team's
 * frames (waiting for an outcome: ./wait.ts).
 */
import WebSocket from 'ws';
import type { Hub } from './hub.ts';
import type { Credential } from './http.ts';
import { startReceiver, type Answer, type Received, type Receiver } from './receivers.ts';
import { verifySignature, SIGNATURE_HEADER } from '../../src/modules/alerts/delivery/signature.ts';

export const ALERT_ENV = {
  WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
  WEBHOOK_BACKOFF_MS: '20',
  WEBHOOK_TIMEOUT_MS: '400',
  WEBHOOK_MAX_ATTEMPTS: '3',
};

/** A receiver as the protocol asks (§5 item 3): 401 unless the signature over the raw bytes matches, in constant time. */
export function signedReceiver(secret: string, then: (r: Received) => Answer = () => ({ status: 200, body: 'ok' })): Promise<Receiver> {
  return startReceiver((r) => {
    const header = r.headers[SIGNATURE_HEADER.toLowerCase()];
    if (!verifySignature(secret, r.body, typeof header === 'string' ? header : undefined)) return { status: 401, body: 'bad signature' };
    return then(r);
  });
}

const headersOf = (as: Credential): Record<string, string> => (as.token ? { authorization: `Bearer ${as.token}` } : { cookie: as.cookie! });

/** A team socket on /ws/events keeping every frame; resolves on the hub's hello (the socket is then registered). */
export function teamSocket(hub: Hub, tenantId: string, as: Credential): Promise<{ frames: any[]; close: () => void }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${hub.url.replace(/^http/, 'ws')}/ws/events?tenantId=${tenantId}`, { headers: headersOf(as) });
    const frames: any[] = [];
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString());
      frames.push(frame);
      if (frame.type === 'hello') resolve({ frames, close: () => ws.close() });
    });
    ws.on('error', reject);
    ws.on('unexpected-response', (_req, res) => reject(new Error(`refused ${res.statusCode}`)));
  });
}

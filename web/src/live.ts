/**
 * The team's live events over `/ws/events?tenantId=…` (same origin: the session cookie rides
 * along). Reconnects with a growing pause; pings every 25 s so proxies keep the socket open.
 */
import { useEffect, useRef, useState } from 'react';

export interface LiveDetection {
  type: 'detection';
  id: string;
  tenantId: string;
  satelliteId: string;
  satelliteName: string;
  speciesCode: string;
  commonName: string;
  scientificName: string;
  confidence: number;
  isRare: boolean;
  isFirstOfSeason: boolean;
  detectedAt: string;
  audioChunkId: string;
}

export function useLiveEvents(tenantId: string | null, onEvent: (e: { type: string } & Record<string, unknown>) => void): boolean {
  const [connected, setConnected] = useState(false);
  const handler = useRef(onEvent);
  handler.current = onEvent;

  useEffect(() => {
    if (!tenantId) return;
    let ws: WebSocket | null = null;
    let stopped = false;
    let retry = 500;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let ping: ReturnType<typeof setInterval> | undefined;
    const open = () => {
      const proto = location.protocol === 'https:' ? 'wss' : 'ws';
      ws = new WebSocket(`${proto}://${location.host}/ws/events?tenantId=${encodeURIComponent(tenantId)}`);
      ws.onopen = () => {
        retry = 500;
        setConnected(true);
        ping = setInterval(() => ws?.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ type: 'keepalive' })), 25_000);
      };
      ws.onmessage = (m) => {
        try {
          const frame = JSON.parse(String(m.data));
          if (frame && typeof frame.type === 'string') handler.current(frame);
        } catch {
          // not a frame of ours
        }
      };
      ws.onclose = () => {
        setConnected(false);
        clearInterval(ping);
        if (stopped) return;
        timer = setTimeout(open, retry);
        retry = Math.min(retry * 2, 15_000);
      };
    };
    open();
    return () => {
      stopped = true;
      clearTimeout(timer);
      clearInterval(ping);
      ws?.close();
    };
  }, [tenantId]);
  return connected;
}

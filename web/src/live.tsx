/**
 * The team's live events over `/ws/events?tenantId=…` (same origin: the session cookie rides
 * along). Reconnects with a growing pause; pings every 25 s so proxies keep the socket open.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { api, data } from './api/client';
import { detectionKeys } from './api/hooks/detections';
import { useT } from './i18n';
import { useSession, useToast } from './session';

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

type Listener = (d: LiveDetection) => void;
interface LiveValue {
  connected: boolean;
  /** Detections of the active team as they arrive; answers the unsubscribe. */
  subscribe(fn: Listener): () => void;
}
const LiveContext = createContext<LiveValue>({ connected: false, subscribe: () => () => {} });
export const useLive = () => useContext(LiveContext);

/**
 * One socket for the signed-in app shell: every page hears the active team's detections. A
 * detection refreshes the team's detection queries wherever they are shown, a rare species
 * gets a toast naming it in the person's languages, and pages may listen for the rest.
 */
export function LiveProvider({ tenantId, children }: { tenantId: string | null; children: ReactNode }) {
  const t = useT();
  const toast = useToast();
  const qc = useQueryClient();
  const { me } = useSession();
  const listeners = useRef(new Set<Listener>());
  // A rare species is named in the person's primary and secondary languages (English and the
  // scientific name when the catalog has no translation or the lookup fails).
  const languages = [me.preferences.primaryLanguage, ...(me.preferences.secondaryLanguages ?? [])].filter(Boolean).join(',');
  const rareToast = useCallback(
    async (d: LiveDetection) => {
      let names = [d.commonName];
      try {
        const tr = await data<{ names: Record<string, string> }>(
          api.GET('/api/species/translate', { params: { query: { speciesCode: d.speciesCode, languages: languages || 'en' } } }),
        );
        names = [...new Set(Object.values(tr.names))];
      } catch {
        // The English name from the event stands in.
      }
      toast(t('toast.rare', { name: `${names.join(' · ')} (${d.scientificName})` }), 'rare');
    },
    [languages, toast, t],
  );
  const onEvent = useCallback(
    (e: { type: string } & Record<string, unknown>) => {
      if (e.type !== 'detection') return;
      const d = e as unknown as LiveDetection;
      if (tenantId && d.tenantId && d.tenantId !== tenantId) return;
      for (const fn of listeners.current) fn(d);
      void qc.invalidateQueries({ queryKey: detectionKeys.listsOf(tenantId) });
      if (d.isRare) void rareToast(d);
    },
    [qc, tenantId, rareToast],
  );
  const connected = useLiveEvents(tenantId, onEvent);
  const subscribe = useCallback((fn: Listener) => {
    listeners.current.add(fn);
    return () => void listeners.current.delete(fn);
  }, []);
  const value = useMemo(() => ({ connected, subscribe }), [connected, subscribe]);
  return <LiveContext.Provider value={value}>{children}</LiveContext.Provider>;
}

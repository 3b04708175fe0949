/**
 * The team's live events over `/ws/events?tenantId=…` (same origin: the session cookie rides
 * along). Reconnects with a growing pause; pings every 25 s so proxies keep the socket open.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { detectionKeys } from './api/hooks/detections';
import { useT } from './i18n';
import { useToast } from './session';
import { useNameInLanguages } from './species';
import { useRefreshAlerts, type Alert } from './api/hooks/alerts';

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

/** An alert the team's rules raised (the engine's `alert` frame); speciesCode names the species when there is one. */
export interface LiveAlert {
  type: 'alert';
  alert: Alert;
  speciesCode: string | null;
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
 * gets a toast naming it in the person's languages, and pages may listen for the rest. An
 * alert refreshes the alert list and the unread count, and toasts its message (with the
 * species in the person's languages when it names one).
 */
export function LiveProvider({ tenantId, children }: { tenantId: string | null; children: ReactNode }) {
  const t = useT();
  const toast = useToast();
  const qc = useQueryClient();
  const refreshAlerts = useRefreshAlerts(tenantId);
  const listeners = useRef(new Set<Listener>());
  // Species are named in the person's primary and secondary languages (see useNameInLanguages).
  const nameOf = useNameInLanguages();
  const rareToast = useCallback(
    async (d: LiveDetection) => {
      const names = await nameOf(d.speciesCode, d.commonName);
      toast(t('toast.rare', { name: `${names} (${d.scientificName})` }), 'rare');
    },
    [nameOf, toast, t],
  );
  const alertToast = useCallback(
    async (f: LiveAlert) => {
      const a = f.alert;
      const code = f.speciesCode ?? a.speciesCode;
      if (!code) return toast(t('toast.alert', { message: a.message }), 'alert');
      const names = await nameOf(code, a.commonName ?? a.species ?? code);
      const name = a.species && a.species !== names ? `${names} (${a.species})` : names;
      toast(t('toast.alertSpecies', { message: a.message, name }), 'alert');
    },
    [nameOf, toast, t],
  );
  const onEvent = useCallback(
    (e: { type: string } & Record<string, unknown>) => {
      if (e.type === 'alert') {
        const f = e as unknown as LiveAlert;
        if (!f.alert || typeof f.alert.message !== 'string') return;
        refreshAlerts();
        void alertToast(f);
        return;
      }
      if (e.type !== 'detection') return;
      const d = e as unknown as LiveDetection;
      if (tenantId && d.tenantId && d.tenantId !== tenantId) return;
      for (const fn of listeners.current) fn(d);
      void qc.invalidateQueries({ queryKey: detectionKeys.listsOf(tenantId) });
      if (d.isRare) void rareToast(d);
    },
    [qc, tenantId, rareToast, alertToast, refreshAlerts],
  );
  const connected = useLiveEvents(tenantId, onEvent);
  // Live events are not replayed: what happened while the socket was away (its api process
  // restarted, the network dropped) is read again when it opens again (docs/operations.md "Faults survived").
  const everOpen = useRef(false);
  const wasOpen = useRef(false);
  useEffect(() => {
    const reopened = connected && !wasOpen.current && everOpen.current;
    if (connected) everOpen.current = true;
    wasOpen.current = connected;
    if (!reopened) return;
    void qc.invalidateQueries({ queryKey: detectionKeys.listsOf(tenantId) });
    refreshAlerts();
  }, [connected, qc, tenantId, refreshAlerts]);
  const subscribe = useCallback((fn: Listener) => {
    listeners.current.add(fn);
    return () => void listeners.current.delete(fn);
  }, []);
  const value = useMemo(() => ({ connected, subscribe }), [connected, subscribe]);
  return <LiveContext.Provider value={value}>{children}</LiveContext.Provider>;
}

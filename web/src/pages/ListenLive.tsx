/**
 * "Listen live": a socket of its own with ?listenSatelliteId= starts the satellite's live
 * session; each `live-audio` frame (a base64 WAV of a few seconds) is decoded and queued
 * back to back. Keepalives every 15 s hold the session (the hub ends it 60 s after the last);
 * closing the socket stops it.
 */
import { useEffect, useRef, useState } from 'react';
import { useT } from '../i18n';
import { ErrorText } from '../components/ui';

export function ListenLive({ tenantId, satelliteId }: { tenantId: string; satelliteId: string }) {
  const t = useT();
  const [on, setOn] = useState(false);
  const [state, setState] = useState<'idle' | 'connecting' | 'listening'>('idle');
  const [chunks, setChunks] = useState(0);
  const [error, setError] = useState<Error | null>(null);
  const ctxRef = useRef<AudioContext | null>(null);

  useEffect(() => {
    if (!on) return;
    setState('connecting');
    setChunks(0);
    setError(null);
    const audio = new AudioContext();
    ctxRef.current = audio;
    let playAt = 0;
    const proto = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(
      `${proto}://${location.host}/ws/events?tenantId=${encodeURIComponent(tenantId)}&listenSatelliteId=${encodeURIComponent(satelliteId)}`,
    );
    const ping = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ type: 'keepalive' })), 15_000);
    ws.onmessage = async (m) => {
      let frame: { type?: string; satelliteId?: string; audio?: string; message?: string; reason?: string };
      try {
        frame = JSON.parse(String(m.data));
      } catch {
        return;
      }
      if (frame.type === 'live-started') setState('listening');
      else if (frame.type === 'error') setError(new Error(frame.message ?? t('live.failed')));
      else if (frame.type === 'live-stopped') {
        setError(new Error(t('live.stopped', { reason: frame.reason ?? '' })));
        setOn(false);
      } else if (frame.type === 'live-audio' && frame.satelliteId === satelliteId && frame.audio) {
        const bin = Uint8Array.from(atob(frame.audio), (c) => c.charCodeAt(0));
        try {
          const buf = await audio.decodeAudioData(bin.buffer);
          const src = audio.createBufferSource();
          src.buffer = buf;
          src.connect(audio.destination);
          playAt = Math.max(playAt, audio.currentTime + 0.05);
          src.start(playAt);
          playAt += buf.duration;
          setChunks((n) => n + 1);
        } catch {
          setError(new Error(t('live.undecodable')));
        }
      }
    };
    ws.onclose = (e) => {
      if (e.code !== 1000 && e.code !== 1005) setError(new Error(e.reason || t('live.closed')));
      setState('idle');
    };
    return () => {
      clearInterval(ping);
      ws.close(1000);
      void audio.close();
      ctxRef.current = null;
      setState('idle');
    };
  }, [on, tenantId, satelliteId, t]);

  return (
    <div className="row" data-testid="listen-live">
      <button type="button" className={on ? 'danger' : 'secondary'} aria-pressed={on} onClick={() => setOn(!on)}>
        {on ? t('live.stop') : t('live.listen')}
      </button>
      {on ? (
        <span role="status" className="muted small">
          {state === 'listening' ? t('live.listening', { n: chunks }) : t('live.connecting')}
        </span>
      ) : null}
      <ErrorText error={error} />
    </div>
  );
}

/**
 * The microphone, the phone's position and the screen wake lock: the browser parts a board
 * satellite has no need of. Capture runs a ScriptProcessor (an AudioWorklet would need its own
 * module file; the processor is enough for mono 3-second chunks) and hands mono frames on.
 */

export interface Capture {
  sampleRate: number;
  stop(): Promise<void>;
}

/** Starts the microphone (the browser asks the person once); `frame` gets mono blocks of samples. */
export async function startCapture(frame: (samples: Float32Array) => void): Promise<Capture> {
  const stream = await navigator.mediaDevices.getUserMedia({
    // Processing meant for voices (echo cancelling, noise suppression, gain control) spoils birdsong.
    audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  const ctx = new AudioContext();
  await ctx.resume();
  const source = ctx.createMediaStreamSource(stream);
  const processor = ctx.createScriptProcessor(4096, 1, 1);
  // The processor runs only when connected onwards; a silent gain keeps it off the speaker.
  const mute = ctx.createGain();
  mute.gain.value = 0;
  processor.onaudioprocess = (e) => frame(new Float32Array(e.inputBuffer.getChannelData(0)));
  source.connect(processor);
  processor.connect(mute);
  mute.connect(ctx.destination);
  return {
    sampleRate: ctx.sampleRate,
    async stop() {
      processor.onaudioprocess = null;
      source.disconnect();
      processor.disconnect();
      for (const t of stream.getTracks()) t.stop();
      await ctx.close().catch(() => {});
    },
  };
}

export interface Position {
  latitude: number;
  longitude: number;
}

/** Follows the phone's position when the person allows it; `latest()` is null until a fix (or when refused). */
export function watchPosition(onError: (message: string) => void): { latest(): Position | null; stop(): void } {
  let last: Position | null = null;
  if (!('geolocation' in navigator)) return { latest: () => null, stop: () => {} };
  const id = navigator.geolocation.watchPosition(
    (p) => (last = { latitude: p.coords.latitude, longitude: p.coords.longitude }),
    (err) => onError(err.message),
    { enableHighAccuracy: false, maximumAge: 60_000 },
  );
  return { latest: () => last, stop: () => navigator.geolocation.clearWatch(id) };
}

/**
 * Keeps the screen on while recording: a phone whose screen locks suspends the page, and with it
 * the microphone. The browser lets the lock go whenever the page is hidden; it is taken again
 * when the page is visible again.
 */
export function holdWakeLock(onChange: (held: boolean) => void): { release(): void } {
  let lock: WakeLockSentinel | null = null;
  let released = false;
  const acquire = async () => {
    if (released || !('wakeLock' in navigator) || document.visibilityState !== 'visible') return;
    try {
      lock = await navigator.wakeLock.request('screen');
      onChange(true);
      lock.addEventListener('release', () => onChange(false));
    } catch {
      onChange(false);
    }
  };
  const onVisible = () => void acquire();
  document.addEventListener('visibilitychange', onVisible);
  void acquire();
  return {
    release() {
      released = true;
      document.removeEventListener('visibilitychange', onVisible);
      void lock?.release().catch(() => {});
      lock = null;
    },
  };
}

import type { Infra, Services } from './app.ts';
import { startConfigPusher } from './broker/config-pusher.ts';

/**
 * The background parts of a hub, by mode (DESIGN.md §3): what runs besides the HTTP API.
 * Returns a function that stops them.
 */
export function startRuntime(infra: Infra, _services: Services, log: { error: (obj: unknown, msg?: string) => void }): () => Promise<void> {
  const stops: Array<() => void | Promise<void>> = [];
  const mode = infra.config.mode;
  if (mode === 'full' || mode === 'dispatcher') {
    stops.push(startConfigPusher({ bus: infra.bus, broker: infra.broker, onError: (err) => log.error({ err }, 'config push failed') }));
  }
  return async () => {
    for (const stop of stops.reverse()) await stop();
  };
}

import type { Bus } from '../infra/bus/index.ts';

/**
 * Turns "config changed" events into config pushes (satellite protocol "Config push" rule 3).
 * Runs where the broker connection lives (full and dispatcher modes); in split mode the api
 * publishes the event on the Redis bus and the dispatcher pushes.
 */
export function startConfigPusher(deps: {
  bus: Bus;
  /** Reads the satellite's config at send time, in order with its other pushes. */
  publishConfig: (tenantId: string, satelliteId: string) => Promise<void>;
  onError: (err: unknown) => void;
}): () => void {
  return deps.bus.subscribe('satellite.config_changed', (e) => {
    deps.publishConfig(e.tenantId, e.satelliteId).catch(deps.onError);
  });
}

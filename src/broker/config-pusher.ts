import type { Bus } from '../infra/bus/index.ts';
import type { Broker } from '../infra/broker/index.ts';
import { topicOf } from '../modules/satellites/service.ts';

/**
 * Turns "config changed" events into config pushes (satellite protocol "Config push" rule 3).
 * Runs where the broker connection lives (full and dispatcher modes); in split mode the api
 * publishes the event on the Redis bus and the dispatcher pushes.
 */
export function startConfigPusher(deps: { bus: Bus; broker: Pick<Broker, 'publish'>; onError: (err: unknown) => void }): () => void {
  return deps.bus.subscribe('satellite.config_changed', (e) => {
    const body = JSON.stringify({ satelliteId: e.satelliteId, tenantId: e.tenantId, ...e.config });
    deps.broker.publish(topicOf(e.tenantId, e.satelliteId, 'config'), body, { qos: 2 }).catch(deps.onError);
  });
}

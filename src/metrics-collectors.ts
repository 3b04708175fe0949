/**
 * The gauges the composition installs on the metrics port (GET /metrics), read at each scrape
 * from the ports: queue depths, the database pool, MQTT sessions, and whether the broker and the
 * key-value store answer this process.
 */
import type { Infra } from './infra/types.ts';
import type { Metrics, Sample } from './infra/metrics/index.ts';
import { INFERENCE_QUEUE } from './protocol/jobs.ts';
import { ALERT_DELIVERY_QUEUE } from './modules/alerts/dispatch.ts';
import { EXPORT_QUEUE } from './modules/exports/service.ts';

/**
 * Gauges read at each scrape from the ports: queue depths, the database pool, MQTT sessions, and
 * whether the broker and the key-value store answer this process.
 */
export function installCollectors(metrics: Metrics, infra: Infra): void {
  const { queue, db, broker, kv, config } = infra;
  // The queue on Redis is one for every process: its depth is reported by the process that holds
  // the broker (full or dispatcher) only, so sum() over a split deployment counts it once.
  if (queue.kind === 'memory' || config.mode === 'full' || config.mode === 'dispatcher') {
    metrics.gauge(
      'chorus_queue_jobs',
      'Jobs per queue and state (waiting, active, delayed, failed, completed); one process per deployment reports it',
      ['queue', 'state'],
      async () => {
        const out: Array<[Record<string, string>, number]> = [];
        for (const name of [INFERENCE_QUEUE, ALERT_DELIVERY_QUEUE, EXPORT_QUEUE]) {
          const counts = await queue.counts(name);
          for (const [state, n] of Object.entries(counts)) out.push([{ queue: name, state }, n]);
        }
        return out;
      },
    );
  }
  if (broker.connected) {
    const connected = broker.connected.bind(broker);
    metrics.gauge('chorus_broker_connected', "1 while this process's client is connected to the MQTT broker, else 0", [], () => [
      [{}, connected() ? 1 : 0],
    ]);
  }
  metrics.gauge('chorus_kv_up', '1 when the key-value store answered this scrape within a second, else 0', [], async () => {
    const answered = await Promise.race([
      kv.get('system:probe').then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1000).unref()),
    ]);
    return [[{}, answered ? 1 : 0]];
  });
  if (db.poolStats) {
    const pools = { api: db.poolStats.bind(db), exports: db.copyPoolStats?.bind(db) };
    metrics.gauge(
      'chorus_db_pool_connections',
      'PostgreSQL pool clients: total, idle, and requests waiting for one; the API pool and the streamed exports pool',
      ['pool', 'state'],
      () =>
        Object.entries(pools).flatMap(([pool, stats]) =>
          stats ? Object.entries(stats()).map(([state, n]): Sample => [{ pool, state }, n]) : [],
        ),
    );
  }
  if (broker.connectedClients) {
    const count = broker.connectedClients.bind(broker);
    metrics.gauge('chorus_mqtt_connections', 'MQTT sessions connected to the embedded broker (the hub client included)', [], () => [
      [{}, count()],
    ]);
  }
}

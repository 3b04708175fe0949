/**
 * Prometheus metrics (GET /metrics, docs/operations.md "Health, status and metrics"). One
 * registry per hub instance, never prom-client's global one, so several hubs in one process
 * (the tests) keep their own counts. Layers below the composition get the narrow recorders of
 * the `Metrics` port; the composition adds the collectors that read other ports (queue depth,
 * database pool).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Why a chunk was refused, in few values (the reason text itself is in the log and the ack). */
export type RefusalKind = 'invalid' | 'unknown_satellite' | 'unavailable';

export type Sample = [labels: Record<string, string>, value: number];

export type AlertFindingOutcome = 'stored' | 'duplicate' | 'cooldown';

export interface Metrics {
  /** One HTTP request answered: the route's URL pattern (not the raw path), method and status. */
  httpRequest(route: string, method: string, status: number, seconds: number): void;
  /** A chunk acknowledged as stored, with the time from its arrival to the ack. */
  chunkIngested(ackSeconds: number): void;
  chunkRefused(kind: RefusalKind): void;
  /** One inference job attempt finished. */
  inferenceJob(outcome: 'completed' | 'failed', seconds: number): void;
  /** One webhook (or other channel) delivery attempt: delivered, retrying or failed. */
  alertDelivery(channelType: string, outcome: string): void;
  /** One finding of an alert rule evaluated in this process: stored as an alert, already stored (by another process), or within the cooldown. */
  alertFinding(outcome: AlertFindingOutcome): void;
  /** A gauge read when scraped; `read` answers its samples (labels → value). */
  gauge(name: string, help: string, labelNames: string[], read: () => Promise<Sample[]> | Sample[]): void;
  /** The Prometheus text exposition. */
  render(): Promise<{ contentType: string; body: string }>;
}

/** Classifies an ingest refusal reason (see src/ingest/ingester.ts). */
export function refusalKind(reason: string): RefusalKind {
  if (reason.includes('unavailable')) return 'unavailable';
  if (reason === 'unknown satellite') return 'unknown_satellite';
  return 'invalid';
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const JOB_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60];

export function createMetrics(opts: { defaultMetrics?: boolean; labels?: Record<string, string> } = {}): Metrics {
  const registry = new Registry();
  if (opts.labels) registry.setDefaultLabels(opts.labels);
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  // Counted per request in a plain map and handed to prom-client when scraped: its per-call label
  // checks and hashing were ~7% of a small answer's time (issue 20).
  const answered = new Map<string, { labels: { route: string; method: string; status: string }; n: number }>();
  const durationLabels = new Map<string, { route: string; method: string }>();
  new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'],
    registers,
    collect() {
      for (const a of answered.values()) {
        if (a.n > 0) this.inc(a.labels, a.n);
        a.n = 0;
      }
    },
  });
  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency, by route pattern and method',
    labelNames: ['route', 'method'],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const ingested = new Counter({ name: 'chorus_chunks_ingested_total', help: 'Audio chunks stored and acknowledged', registers });
  const refused = new Counter({
    name: 'chorus_chunks_refused_total',
    help: 'Audio chunks refused with an error ack, by kind (invalid, unknown_satellite, unavailable)',
    labelNames: ['kind'],
    registers,
  });
  const ackLatency = new Histogram({
    name: 'chorus_chunk_ack_latency_seconds',
    help: 'Time from a chunk message arriving to its stored ack',
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const jobs = new Histogram({
    name: 'chorus_inference_job_duration_seconds',
    help: 'Inference job attempts, by outcome',
    labelNames: ['outcome'],
    buckets: JOB_BUCKETS,
    registers,
  });
  const deliveries = new Counter({
    name: 'chorus_alert_deliveries_total',
    help: 'Alert delivery attempts (webhooks and other channels), by channel type and outcome (delivered, retrying, failed)',
    labelNames: ['channel', 'outcome'],
    registers,
  });
  const findings = new Counter({
    name: 'chorus_alert_findings_total',
    help: 'Alert rule findings evaluated in this process, by outcome (stored, duplicate: already stored, cooldown)',
    labelNames: ['outcome'],
    registers,
  });
  // Labelled series appear at 0 before their first event, so dashboards and alerts see them from the start.
  for (const kind of ['invalid', 'unknown_satellite', 'unavailable']) refused.labels(kind).inc(0);
  for (const outcome of ['completed', 'failed']) jobs.zero({ outcome });
  for (const outcome of ['stored', 'duplicate', 'cooldown']) findings.labels(outcome).inc(0);
  return {
    httpRequest(route, method, status, seconds) {
      const key = `${method} ${route}`;
      const countKey = `${key} ${status}`;
      const a = answered.get(countKey);
      if (a) a.n++;
      else answered.set(countKey, { labels: { route, method, status: String(status) }, n: 1 });
      let labels = durationLabels.get(key);
      if (!labels) durationLabels.set(key, (labels = { route, method }));
      httpDuration.observe(labels, seconds);
    },
    chunkIngested(ackSeconds) {
      ingested.inc();
      ackLatency.observe(ackSeconds);
    },
    chunkRefused: (kind) => refused.labels(kind).inc(),
    inferenceJob: (outcome, seconds) => jobs.labels(outcome).observe(seconds),
    alertDelivery: (channel, outcome) => deliveries.labels(channel, outcome).inc(),
    alertFinding: (outcome) => findings.labels(outcome).inc(),
    gauge(name, help, labelNames, read) {
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          this.reset();
          try {
            for (const [labels, value] of await read()) this.set(labels, value);
          } catch {
            // A port that cannot answer leaves its gauge empty for this scrape.
          }
        },
      });
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

/** Records nothing (one-shot commands, unit tests of the layers below). */
export const noMetrics: Metrics = {
  httpRequest: () => {},
  chunkIngested: () => {},
  chunkRefused: () => {},
  inferenceJob: () => {},
  alertDelivery: () => {},
  alertFinding: () => {},
  gauge: () => {},
  render: async () => ({ contentType: 'text/plain; version=0.0.4; charset=utf-8', body: '' }),
};

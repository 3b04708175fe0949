/**
 * Monthly partitions of detections on PostgreSQL (issue 37, migration 0039). The months ahead
 * exist before their first row arrives; a row older than every partition (an imported recording)
 * waits in the default partition until the next run gives its month a partition and moves it
 * there. Embedded (PGlite) keeps one table and has nothing to do. The rules live in SQL
 * (chorus_detection_partitions_ensure) so the migration and this job create partitions alike.
 */
import { col, shape, type Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';

/** The current month and this many after it always have their partition. */
export const PARTITION_MONTHS_AHEAD = 3;
/** Four runs a day: a month's partition is there long before the month, a default row moves within hours. */
export const PARTITION_INTERVAL_MS = 6 * 3_600_000;

const Created = shape({ created: col.int() });

/** Creates the missing partitions around `now` and for rows waiting in the default one; how many were created. */
export async function ensureDetectionPartitions(db: Db, now: Date, ahead = PARTITION_MONTHS_AHEAD): Promise<number> {
  if (db.kind !== 'postgres') return 0;
  return (await db.one(Created, 'SELECT chorus_detection_partitions_ensure($1, $2) AS created', [now, ahead])).created;
}

/** The periodic run the runtime starts (full and dispatcher modes): once at start, then every six hours. */
export function startPartitionMaintainer(deps: {
  db: Db;
  clock: Clock;
  onError: (err: unknown) => void;
  onCreated?: (created: number) => void;
  timers?: boolean;
}) {
  let running: Promise<unknown> | null = null;
  const tick = async () => {
    while (running) await running.catch(() => {});
    const p = ensureDetectionPartitions(deps.db, deps.clock.now());
    running = p;
    try {
      const created = await p;
      if (created > 0) deps.onCreated?.(created);
      return created;
    } finally {
      running = null;
    }
  };
  const first = deps.db.kind === 'postgres' ? tick().catch(deps.onError) : Promise.resolve();
  const timer =
    deps.db.kind === 'postgres' && deps.timers !== false ? setInterval(() => tick().catch(deps.onError), PARTITION_INTERVAL_MS) : null;
  timer?.unref();
  return {
    tick,
    /** The run at start has finished (or failed and been reported). */
    ready: first.then(() => undefined),
    async stop() {
      if (timer) clearInterval(timer);
      await first;
      await running?.catch(() => {});
    },
  };
}

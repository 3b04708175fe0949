/**
 * What the detection stream (streams.ts, issue 38) reads and stores: a team's stream channels,
 * a detection's chunk, call times and position, the satellite's count of the day, and one
 * delivery per (channel, detection) whichever process stores it first.
 */
import { col, Count, shape, type Db } from '../../infra/db/index.ts';
import { ChannelRow } from './repo.ts';
import { STREAM_CHANNEL_TYPES } from './schemas.ts';
import type { StreamPayload } from './delivery/types.ts';

const CHANNEL = `id, tenant_id AS "tenantId", type, name, config, secrets, payload_template AS "payloadTemplate",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

const Facts = shape({
  chunkId: col.nullable(col.text()),
  chunkStartedAt: col.nullable(col.date()),
  chunkDurationMs: col.nullable(col.int()),
  startMs: col.int(),
  endMs: col.int(),
  latitude: col.nullable(col.num()),
  longitude: col.nullable(col.num()),
});

const Id = shape({ id: col.text() });

export function createStreamRepo(db: Db) {
  return {
    streamChannelsOf: (tenantId: string) =>
      db.query(
        ChannelRow,
        `SELECT ${CHANNEL} FROM alert_channels WHERE tenant_id = $1 AND type = ANY($2::text[]) ORDER BY created_at, id`,
        [tenantId, STREAM_CHANNEL_TYPES],
      ),

    /** The chunk, the call's place in it, and where the satellite was: the chunk's position, else its latest GPS fix, else its profile. */
    facts: (tenantId: string, detectionId: string) =>
      db.maybeOne(
        Facts,
        `SELECT d.chunk_id AS "chunkId", c.recorded_at AS "chunkStartedAt", c.duration_ms AS "chunkDurationMs",
           d.start_ms AS "startMs", d.end_ms AS "endMs",
           CASE WHEN c.latitude IS NOT NULL AND c.longitude IS NOT NULL THEN c.latitude
                WHEN f.latitude IS NOT NULL AND f.longitude IS NOT NULL THEN f.latitude
                WHEN s.longitude IS NOT NULL THEN s.latitude END AS latitude,
           CASE WHEN c.latitude IS NOT NULL AND c.longitude IS NOT NULL THEN c.longitude
                WHEN f.latitude IS NOT NULL AND f.longitude IS NOT NULL THEN f.longitude
                WHEN s.latitude IS NOT NULL THEN s.longitude END AS longitude
         FROM detections d
         JOIN satellites s ON s.id = d.satellite_id
         LEFT JOIN chunks c ON c.id = d.chunk_id
         LEFT JOIN LATERAL (
           SELECT t.latitude, t.longitude FROM telemetry t
           WHERE t.satellite_id = d.satellite_id AND t.latitude IS NOT NULL ORDER BY t.at DESC, t.id DESC LIMIT 1
         ) f ON true
         WHERE d.tenant_id = $1 AND d.id = $2`,
        [tenantId, detectionId],
      ),

    /** The satellite's listed detections from the start of `at`'s day in the zone up to `at`: the Detections page's count. */
    countToday: async (tenantId: string, satelliteId: string, at: Date, timeZone: string) =>
      (
        await db.one(
          Count,
          `SELECT count(*)::int AS n FROM detections
           WHERE tenant_id = $1 AND satellite_id = $2 AND NOT tentative AND call_id IS NULL AND NOT out_of_range
             AND detected_at >= (date_trunc('day', $3::timestamptz AT TIME ZONE $4) AT TIME ZONE $4) AND detected_at <= $3`,
          [tenantId, satelliteId, at, timeZone],
        )
      ).n,

    /** Stores the deliveries not stored yet (ids are derived from channel and detection); returns the ids this call stored. */
    async insertOnce(
      rows: Array<{ id: string; tenantId: string; channelId: string; payload: StreamPayload; at: Date }>,
    ): Promise<string[]> {
      if (rows.length === 0) return [];
      const stored = await db.query(
        Id,
        `INSERT INTO alert_deliveries (id, tenant_id, channel_id, alert_id, event, status, payload, created_at, updated_at)
         SELECT id, tenant_id, channel_id, NULL, 'detection', 'pending', payload, at, at
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::jsonb[], $5::timestamptz[]) AS r(id, tenant_id, channel_id, payload, at)
         ON CONFLICT (id) DO NOTHING
         RETURNING id::text AS id`,
        [
          rows.map((r) => r.id),
          rows.map((r) => r.tenantId),
          rows.map((r) => r.channelId),
          rows.map((r) => JSON.stringify(r.payload)),
          rows.map((r) => r.at),
        ],
      );
      return stored.map((r) => r.id);
    },
  };
}

export type StreamRepo = ReturnType<typeof createStreamRepo>;

import { Type } from 'typebox';
import { Open } from '../../core/schemas.ts';

/** GET /system/status and GET /health/ready: response schemas for the generated client. */

export const CheckView = Open({
  ok: Type.Boolean(),
  latencyMs: Type.Number(),
  kind: Type.String(),
  error: Type.Optional(Type.String()),
});

export const ServiceView = Open({
  id: Type.String(),
  status: Type.Literal('up'),
  mode: Type.String(),
  version: Type.String(),
  startedAt: Type.String(),
  lastSeen: Type.String(),
  expiresAt: Type.String(),
  uptimeSeconds: Type.Number(),
  memory: Open({ rss: Type.Number(), heapUsed: Type.Number() }),
  ip: Type.String(),
  hostname: Type.String(),
  pid: Type.Integer(),
  details: Type.Record(Type.String(), Type.Unknown()),
});

export const SystemStatus = Open({
  services: Type.Array(ServiceView),
  infrastructure: Open({ database: CheckView, kv: CheckView, broker: CheckView, storage: CheckView }),
  data: Open({
    detections: Open({ total: Type.Integer(), listed: Type.Integer(), tentative: Type.Integer() }),
    chunks: Type.Integer(),
    inferenceQueue: Open({
      waiting: Type.Integer(),
      active: Type.Integer(),
      completed: Type.Integer(),
      failed: Type.Integer(),
      delayed: Type.Integer(),
    }),
    speciesImages: Open({ total: Type.Integer(), withImage: Type.Integer(), supported: Type.Boolean() }),
    tenants: Type.Integer(),
    users: Type.Integer(),
    /** Search by sound: hnsw (pgvector's index) or exact (a scan: PostgreSQL without pgvector). */
    similarity: Type.Optional(Open({ index: Type.Union([Type.Literal('hnsw'), Type.Literal('exact')]) })),
  }),
});

export const Readiness = Open({ ready: Type.Boolean(), checks: Type.Record(Type.String(), CheckView) });

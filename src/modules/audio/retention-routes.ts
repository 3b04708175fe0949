import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { Nullable, OneOf } from '../../core/schemas.ts';
import type { RetentionService } from './retention.ts';

export const RetentionRunView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  startedAt: Type.String({ format: 'date-time' }),
  finishedAt: Nullable(Type.String({ format: 'date-time' })),
  status: OneOf(['running', 'finished', 'failed'] as const),
  trigger: OneOf(['schedule', 'manual'] as const),
  chunksRemoved: Type.Integer(),
  bytesFreed: Type.Integer(),
  chunksKept: Type.Integer(),
  error: Nullable(Type.String()),
});

const hub = { access: access.hubAdmin, tags: ['admin'] };

/** Audio retention, hub admins only (src/modules/audio/retention.ts). */
export function retentionRoutes(retention: RetentionService) {
  return [
    defineRoute({
      ...hub,
      method: 'POST',
      url: '/admin/retention/run',
      action: 'retention.run',
      audit: ['admin.retention_run'],
      summary:
        'Starts an audio retention run now, in the background (202 with the run); 200 with the run already going; 409 RETENTION_DISABLED while the hub switch retention_enabled is off',
      schema: { response: { 200: RetentionRunView, 202: RetentionRunView } },
      handler: async ({ actor, reply }) => {
        const { run, started } = await retention.start(actor);
        reply.code(started ? 202 : 200);
        return run;
      },
    }),
    defineRoute({
      ...hub,
      method: 'GET',
      url: '/admin/retention/runs',
      action: 'retention.runs.list',
      audit: [],
      summary: 'The last audio retention runs, newest first: status, trigger, chunks removed and kept, bytes freed',
      schema: {
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) }, { additionalProperties: false }),
        response: { 200: Type.Object({ runs: Type.Array(RetentionRunView) }) },
      },
      handler: async ({ query }) => ({ runs: await retention.list(query.limit ?? 20) }),
    }),
  ];
}

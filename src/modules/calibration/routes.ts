import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { Uuid } from '../../core/schemas.ts';
import type { CalibrationService } from './service.ts';
import { CalibrationCoverage, CalibrationCurve, CalibrationRefresh } from './schemas.ts';

const ModelId = Type.String({ minLength: 1, maxLength: 100 });

export function calibrationRoutes(calibration: CalibrationService) {
  return [
    defineRoute({
      method: 'POST',
      url: '/calibration/refresh',
      action: 'calibration.refresh',
      access: access.role('admin'),
      team: { in: 'body', key: 'tenantId', optional: true },
      audit: ['admin.calibration_refreshed'],
      summary: 'Refits the isotonic calibration curve of each (team, model) in reach; without tenantId a hub admin refits every pair',
      tags: ['calibration'],
      schema: {
        body: Type.Object({ tenantId: Type.Optional(Uuid), modelId: Type.Optional(ModelId) }, { additionalProperties: false }),
        response: { 200: CalibrationRefresh },
      },
      handler: ({ actor, body }) => calibration.refresh(actor, { modelId: body.modelId }),
    }),

    defineRoute({
      method: 'GET',
      url: '/calibration/curve',
      action: 'calibration.curve',
      access: access.role('viewer'),
      team: { in: 'query', key: 'tenantId' },
      audit: [],
      summary: 'One (team, model) calibration curve: buckets mapping raw confidence to calibrated probability',
      tags: ['calibration'],
      schema: {
        querystring: Type.Object({ tenantId: Type.Optional(Uuid), modelId: ModelId }, { additionalProperties: false }),
        response: { 200: CalibrationCurve },
      },
      handler: ({ actor, query }) => calibration.curve(actor.teamId, query.modelId),
    }),

    defineRoute({
      method: 'GET',
      url: '/calibration/coverage',
      action: 'calibration.coverage',
      access: access.role('admin'),
      team: { in: 'query', key: 'tenantId', optional: true },
      audit: [],
      summary: 'Verified-sample counts per (team, model) and the curve in force',
      tags: ['calibration'],
      schema: {
        querystring: Type.Object({ tenantId: Type.Optional(Uuid), modelId: Type.Optional(ModelId) }, { additionalProperties: false }),
        response: { 200: CalibrationCoverage },
      },
      handler: ({ actor, query }) => calibration.coverage(actor, query.modelId),
    }),
  ];
}

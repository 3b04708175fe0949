/** Detections inserted as SQL for the stats tests: exact control of time, tentative, call and status. */
import type { Hub } from './hub.ts';
import type { TestTeam } from './factories.ts';
import { newId } from '../../src/core/crypto.ts';

export interface Row {
  sat: { id: string };
  code: string;
  at: string;
  team?: TestTeam;
  tentative?: boolean;
  callId?: string | null;
  category?: string;
  status?: string;
  confidence?: number;
}

/** Inserts detections as SQL (exact control of time, tentative, call and status). */
export async function insertRows(hub: Hub, team: TestTeam, rows: Row[]): Promise<string[]> {
  const ids = rows.map(() => newId());
  await hub.sql.query(
    `INSERT INTO detections (id, tenant_id, satellite_id, chunk_id, species_code, scientific_name, common_name, category, confidence,
       detected_at, start_ms, end_ms, model_id, tentative, promoted, call_id, verification_status, created_at)
     SELECT r.id, r.tenant_id, r.satellite_id, gen_random_uuid(), r.code, 'Sci ' || r.code, 'Common ' || r.code, r.category, r.confidence,
       r.at, 0, 3000, 'builtin', r.tentative, NOT r.tentative, r.call_id, r.status, r.at
     FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, tenant_id uuid, satellite_id uuid, code text, at timestamptz, tentative boolean,
       call_id uuid, category text, status text, confidence real)`,
    [
      JSON.stringify(
        rows.map((r, i) => ({
          id: ids[i],
          tenant_id: (r.team ?? team).id,
          satellite_id: r.sat.id,
          code: r.code,
          at: r.at,
          tentative: r.tentative ?? false,
          call_id: r.callId ?? null,
          category: r.category ?? 'bird',
          status: r.status ?? 'unverified',
          confidence: r.confidence ?? 0.55,
        })),
      ),
    ],
  );
  return ids;
}

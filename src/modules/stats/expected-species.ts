/**
 * GET /stats/expected-species: the species eBird users reported near the team's satellites
 * (eBird API 2.0, through the ebird module), set against the birds the team detected: expected
 * and heard, expected and not heard, heard and not expected. Without a key, or when eBird fails,
 * a 200 that says it is unavailable and why.
 */
import type { Db } from '../../infra/db/index.ts';
import type { CategoryVisibility } from '../detections/visibility.ts';
import type { DeviceService } from '../satellites/device-service.ts';
import type { EbirdService } from '../ebird/service.ts';
import type { RangeService } from '../range/service.ts';
import type { EbirdObservation } from '../ebird/client.ts';
import type { SourceFailure } from '../weather/client.ts';
import { createGeoRepo } from './geo-repo.ts';
import { positionOf, type GeoWindow } from './map-service.ts';

export const EXPECTED_DIST_DEFAULT_KM = 25;
export const EXPECTED_BACK_DEFAULT_DAYS = 14;

/** What the join needs of the species catalog: eBird codes (and their older aliases) to ours. */
export interface CodeCatalog {
  byCode(code: string): { code: string; commonName: string; scientificName: string; category: string } | undefined;
}

export interface ExpectedItem {
  code: string;
  commonName: string;
  scientificName: string;
  /** eBird's latest report near the satellites (local time there, as eBird writes it); null for heard-only species. */
  lastReportedAt: string | null;
  /** Counted detections in the window; 0 for species not heard. */
  detections: number;
  lastDetectedAt: string | null;
}

export interface SatelliteSource {
  satelliteId: string;
  name: string;
  latitude: number | null;
  longitude: number | null;
  available: boolean;
  reason?: string;
  detail?: string;
}

const byName = (a: ExpectedItem, b: ExpectedItem) => a.commonName.localeCompare(b.commonName);

export function createExpectedSpeciesService(deps: {
  db: Db;
  devices: Pick<DeviceService, 'positions'>;
  visibility: Pick<CategoryVisibility, 'of'>;
  ebird: Pick<EbirdService, 'recent' | 'configured'>;
  /** The hub's range model (issue 35): when one is installed, it says what is expected instead of eBird. */
  range?: Pick<RangeService, 'hasRangeModel' | 'expectedCodesAt'>;
  catalog: () => CodeCatalog;
}) {
  const repo = createGeoRepo(deps.db);

  return {
    async expected(w: GeoWindow, opts: { distKm: number; backDays: number }) {
      const frame = {
        timeZone: w.timeZone,
        from: w.start.toISOString(),
        to: w.end.toISOString(),
        distKm: opts.distKm,
        backDays: opts.backDays,
      };
      const fromRange = deps.range ? await deps.range.hasRangeModel() : false;
      const source = fromRange ? ('range_model' as const) : ('ebird' as const);
      const empty = { source, satellites: [], expectedAndHeard: [], expectedNotHeard: [], heardNotExpected: [] };
      if (!fromRange && !deps.ebird.configured)
        return { ...frame, available: false, reason: 'not_configured', detail: 'No eBird API key is set (EBIRD_API_KEY)', ...empty };
      const [sats, visible] = await Promise.all([deps.devices.positions(w.tenantIds, w.satelliteId), deps.visibility.of(w.tenantIds)]);
      const located = sats.map((s) => ({ s, at: positionOf(s) })).filter((x) => x.at.latitude !== null && x.at.longitude !== null);
      if (located.length === 0)
        return {
          ...frame,
          available: false,
          reason: 'no_position',
          detail: 'No satellite in the selection has a position (profile or GPS)',
          ...empty,
        };

      const catalog = deps.catalog();
      // One key per species across taxonomy versions: eBird's current code and our catalog's.
      const canon = (code: string) => (catalog.byCode(code)?.code ?? code).toLowerCase();
      const expected = new Map<string, ExpectedItem>();
      const satellites: SatelliteSource[] = [];
      let failure: SourceFailure | null = null;
      for (const { s, at } of located) {
        const base = { satelliteId: s.satelliteId, name: s.name, latitude: at.latitude, longitude: at.longitude };
        if (fromRange) {
          // The range model's species for the satellite's position in the window's last week.
          const codes = (await deps.range!.expectedCodesAt(at.latitude!, at.longitude!, w.end)) ?? new Set<string>();
          satellites.push({ ...base, available: true });
          for (const code of codes) {
            const known = catalog.byCode(code);
            if (known && known.category !== 'bird') continue;
            const o = {
              speciesCode: code,
              comName: known?.commonName ?? code,
              sciName: known?.scientificName ?? '',
              obsDt: null,
              howMany: null,
              lat: null,
              lng: null,
            };
            addReport(expected, canon(code), o, catalog);
          }
          continue;
        }
        const answer = await deps.ebird.recent(at.latitude!, at.longitude!, opts.distKm, opts.backDays, {
          cachedOnly: failure ?? undefined,
        });
        if (!answer.ok) {
          failure ??= { ok: false, reason: answer.reason as SourceFailure['reason'], detail: answer.detail };
          satellites.push({ ...base, available: false, reason: answer.reason, detail: answer.detail });
          continue;
        }
        satellites.push({ ...base, available: true });
        for (const o of answer.observations) addReport(expected, canon(o.speciesCode), o, catalog);
      }
      if (!satellites.some((s) => s.available))
        return { ...frame, available: false, reason: failure!.reason, detail: failure!.detail, ...empty, satellites };

      // eBird lists birds; the team's other categories are never "expected".
      const heard = await repo.speciesHeard({
        ...w,
        visible,
        category: 'bird',
        satelliteIds: located.filter((_, i) => satellites[i].available).map((x) => x.s.satelliteId),
      });
      const expectedAndHeard: ExpectedItem[] = [];
      const heardNotExpected: ExpectedItem[] = [];
      const heardKeys = new Set<string>();
      for (const h of heard) {
        const key = canon(h.code);
        const detections = { detections: h.count, lastDetectedAt: new Date(h.lastDetectedAt).toISOString() };
        const e = expected.get(key);
        if (heardKeys.has(key)) {
          // Two of our codes for one species (an old alias and the current code): one entry.
          const item = (e ? expectedAndHeard : heardNotExpected).find((x) => canon(x.code) === key)!;
          item.detections += h.count;
          if (detections.lastDetectedAt > item.lastDetectedAt!) item.lastDetectedAt = detections.lastDetectedAt;
          continue;
        }
        heardKeys.add(key);
        if (e) expectedAndHeard.push({ ...e, ...detections });
        else
          heardNotExpected.push({
            code: h.code,
            commonName: h.commonName,
            scientificName: h.scientificName,
            lastReportedAt: null,
            ...detections,
          });
      }
      const expectedNotHeard = [...expected.entries()].filter(([k]) => !heardKeys.has(k)).map(([, e]) => e);
      const mostDetected = (a: ExpectedItem, b: ExpectedItem) => b.detections - a.detections || byName(a, b);
      return {
        ...frame,
        source,
        available: true,
        satellites,
        expectedAndHeard: expectedAndHeard.sort(mostDetected),
        expectedNotHeard: expectedNotHeard.sort((a, b) => (b.lastReportedAt ?? '').localeCompare(a.lastReportedAt ?? '') || byName(a, b)),
        heardNotExpected: heardNotExpected.sort(mostDetected),
      };
    },
  };
}

/** Adds one eBird report to the expected list, keeping the latest report date per species. */
function addReport(expected: Map<string, ExpectedItem>, key: string, o: EbirdObservation, catalog: CodeCatalog) {
  const known = catalog.byCode(o.speciesCode);
  const item = expected.get(key);
  if (item) {
    if (o.obsDt && (!item.lastReportedAt || o.obsDt > item.lastReportedAt)) item.lastReportedAt = o.obsDt;
    return;
  }
  expected.set(key, {
    code: known?.code ?? o.speciesCode,
    commonName: known?.commonName ?? o.comName,
    scientificName: known?.scientificName ?? o.sciName,
    lastReportedAt: o.obsDt,
    detections: 0,
    lastDetectedAt: null,
  });
}
export type ExpectedSpeciesService = ReturnType<typeof createExpectedSpeciesService>;

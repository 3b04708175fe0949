/**
 * Where the satellites are (GPS fix from telemetry, else the profile position) with what each
 * counted in the window, and the per-detection points of moving (phone) satellites. Drawn over
 * the bundled world outline; raster tiles only when the hub or team set map_tile_url.
 */
import { useMemo } from 'react';
import { useNavigate } from 'react-router';
import { useEffectiveSettings } from '../../api/hooks/settings';
import { useMapDetections, useMapStats } from '../../api/hooks/stats';
import { useT } from '../../i18n';
import { useFormat, useSession } from '../../session';
import { ErrorText, Loading } from '../../components/ui';
import { WorldMap, type MapPoint } from '../../components/charts/WorldMap';
import { StatsFilters, ZoneNote, useStatsFilter, useStatsFormat } from './common';

/** The tile URL template in force for the team, or null: the map then stays fully offline. */
function useTileUrl(tenantId: string | null): string | null {
  const eff = useEffectiveSettings({ tenantId: tenantId ?? '' }, !!tenantId);
  const v = eff.data?.settings.find((s) => s.key === 'map_tile_url')?.value;
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
}

export default function MapView() {
  const t = useT();
  const fmt = useStatsFormat();
  const when = useFormat();
  const navigate = useNavigate();
  const { team } = useSession();
  const filter = useStatsFilter();
  const map = useMapStats(filter);
  const tracks = useMapDetections(filter);
  const tileUrl = useTileUrl(team?.id ?? null);
  const sats = map.data?.satellites;

  const points = useMemo<MapPoint[]>(() => {
    const out: MapPoint[] = [];
    for (const p of tracks.data?.points ?? []) {
      if (p.latitude === null || p.longitude === null) continue;
      out.push({
        id: p.detectionId,
        latitude: p.latitude,
        longitude: p.longitude,
        kind: 'detection',
        title: `${p.commonName}, ${when.dateTime(p.detectedAt)}`,
      });
    }
    for (const s of sats ?? []) {
      if (s.latitude === null || s.longitude === null) continue;
      out.push({
        id: s.satelliteId,
        latitude: s.latitude,
        longitude: s.longitude,
        kind: 'satellite',
        label: s.name,
        title: t('stats.map.pointTitle', { name: s.name, n: s.detectionCount, species: s.speciesCount }),
      });
    }
    return out;
  }, [sats, tracks.data, t, when]);

  return (
    <>
      <StatsFilters />
      <ZoneNote answer={map.data} />
      <ErrorText error={map.error ?? tracks.error} />
      {map.isLoading ? <Loading /> : null}
      {sats ? (
        <>
          <WorldMap points={points} title={t('stats.map.title')} tileUrl={tileUrl} onSelect={(id) => navigate(`/fleet/${id}`)} />
          <p className="muted small">{tileUrl ? t('stats.map.tiles') : t('stats.map.offline')}</p>
          {tracks.data?.truncated ? <p className="muted small">{t('stats.map.truncated', { n: tracks.data.points.length })}</p> : null}
          <div className="table-wrap">
            <table data-testid="map-satellites">
              <caption className="sr-only">{t('stats.map.title')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('stats.satellite')}</th>
                  <th scope="col">{t('stats.map.position')}</th>
                  <th scope="col">{t('stats.detections')}</th>
                  <th scope="col">{t('stats.speciesCount')}</th>
                  <th scope="col">{t('stats.lastHeard')}</th>
                </tr>
              </thead>
              <tbody>
                {sats.map((s) => (
                  <tr key={s.satelliteId}>
                    <th scope="row">{s.name}</th>
                    <td>
                      {s.latitude === null || s.longitude === null
                        ? t('stats.map.noPosition')
                        : `${when.coords(s.latitude, s.longitude, 4)} (${s.positionSource === 'telemetry' ? t('stats.map.gps') : t('stats.map.profile')})`}
                    </td>
                    <td>{fmt.int(s.detectionCount)}</td>
                    <td>{fmt.int(s.speciesCount)}</td>
                    <td>{when.dateTime(s.lastDetectionAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
    </>
  );
}

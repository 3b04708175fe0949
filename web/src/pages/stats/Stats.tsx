/**
 * The Statistics section: one lazily loaded chunk with its own sub-navigation. Every view reads
 * the shared filter from the URL, so switching views keeps the window and the satellite.
 */
import { lazy } from 'react';
import { NavLink, Route, Routes } from 'react-router';
import { useT, type Key } from '../../i18n';
import { useSession } from '../../session';
import { useFilterSearch } from './common';
import { Overview } from './Overview';
import { ActivityView } from './ActivityView';
import { VerificationView } from './VerificationView';
import { DiversityView } from './DiversityView';
import { MigrationView } from './MigrationView';
import { SpeciesCatalog, SpeciesProfileView } from './SpeciesViews';
import { OutlookView } from './OutlookView';

// The map brings the world outline (about 55 KB of TopoJSON) and d3-geo: only when opened.
const MapView = lazy(() => import('./MapView'));

const VIEWS: Array<{ path: string; key: Key }> = [
  { path: '/stats', key: 'stats.nav.overview' },
  { path: '/stats/activity', key: 'stats.nav.activity' },
  { path: '/stats/species', key: 'stats.nav.species' },
  { path: '/stats/verification', key: 'stats.nav.verification' },
  { path: '/stats/diversity', key: 'stats.nav.diversity' },
  { path: '/stats/migration', key: 'stats.nav.migration' },
  { path: '/stats/outlook', key: 'stats.nav.outlook' },
  { path: '/stats/map', key: 'stats.nav.map' },
];

export default function Stats() {
  const t = useT();
  const { team } = useSession();
  const search = useFilterSearch();
  if (!team) return <p>{t('common.noTeam')}</p>;
  return (
    <section aria-labelledby="stats-title">
      <h1 id="stats-title">{t('stats.title')}</h1>
      <nav className="stats-nav" aria-label={t('stats.views')}>
        {VIEWS.map((v) => (
          <NavLink key={v.path} to={`${v.path}${search}`} end={v.path === '/stats'}>
            {t(v.key)}
          </NavLink>
        ))}
      </nav>
      <Routes>
        <Route index element={<Overview />} />
        <Route path="activity" element={<ActivityView />} />
        <Route path="species" element={<SpeciesCatalog />} />
        <Route path="species/:code" element={<SpeciesProfileView />} />
        <Route path="verification" element={<VerificationView />} />
        <Route path="diversity" element={<DiversityView />} />
        <Route path="migration" element={<MigrationView />} />
        <Route path="outlook" element={<OutlookView />} />
        <Route path="map" element={<MapView />} />
      </Routes>
    </section>
  );
}

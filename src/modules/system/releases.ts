/**
 * Satellite releases (hub setting `satellite_releases`: stream name → SemVer, edited by hub
 * admins through the settings endpoints). The update request names the release of the
 * satellite's own stream; GET /system/versions names the highest of them.
 */
import type { SettingsService } from '../settings/service.ts';
import { HUB_VERSION } from './version.ts';
import { highestSemver } from '../../protocol/version.ts';

export type ReleaseSettings = Pick<SettingsService, 'hubSetting'>;

const releasesOf = (settings: ReleaseSettings) => settings.hubSetting('satellite_releases');

/** The recorded release of one stream, or null when that stream has none. */
export const latestRelease =
  (settings: ReleaseSettings) =>
  async (stream: string): Promise<string | null> => {
    const releases = await releasesOf(settings);
    return Object.hasOwn(releases, stream) ? releases[stream] : null;
  };

/** {hub, satellite, mobile}: the hub's own version, the highest satellite release and the highest mobile release (each null without any). */
export async function versions(
  settings: ReleaseSettings,
  mobileLatest: () => Promise<string | null>,
): Promise<{ hub: string; satellite: string | null; mobile: string | null }> {
  return { hub: HUB_VERSION, satellite: highestSemver(Object.values(await releasesOf(settings))), mobile: await mobileLatest() };
}

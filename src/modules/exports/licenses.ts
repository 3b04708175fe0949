/**
 * The licence a team publishes its records and recordings under (team setting
 * `publication_license`, issue 34): its name for people, its URL and whether GBIF takes it.
 *
 * GBIF accepts three licences for occurrence data, named by these URLs in `eml.xml` and the
 * `license` column (its API's License vocabulary, FORMATS.md); a dataset under any other is
 * "unsupported" and cannot be published there. The others serve iNaturalist, xeno-canto and
 * the team's own use.
 */
import type { PUBLICATION_LICENSES } from '../settings/registry.ts';

export type PublicationLicenseId = (typeof PUBLICATION_LICENSES)[number];

export interface PublicationLicense {
  id: PublicationLicenseId;
  /** Short name, written where a format takes a name (xeno-canto's licence field). */
  name: string;
  /** Full title (the `citetitle` of eml.xml's licence link). */
  title: string;
  /** The licence's legal code; null for "all rights reserved", which has none. */
  url: string | null;
  /** GBIF publishes datasets under it. */
  gbif: boolean;
}

const cc = (id: PublicationLicenseId, name: string, title: string, path: string, gbif: boolean): PublicationLicense => ({
  id,
  name,
  title,
  url: `http://creativecommons.org/${path}/legalcode`,
  gbif,
});

// GBIF's own spelling of its three URLs (http, /legalcode): its registry matches them as written.
export const LICENSES: Readonly<Record<PublicationLicenseId, PublicationLicense>> = {
  'CC0-1.0': cc('CC0-1.0', 'CC0 1.0', 'Public Domain (CC0 1.0)', 'publicdomain/zero/1.0', true),
  'CC-BY-4.0': cc('CC-BY-4.0', 'CC BY 4.0', 'Creative Commons Attribution (CC-BY) 4.0 License', 'licenses/by/4.0', true),
  'CC-BY-NC-4.0': cc(
    'CC-BY-NC-4.0',
    'CC BY-NC 4.0',
    'Creative Commons Attribution Non Commercial (CC-BY-NC) 4.0 License',
    'licenses/by-nc/4.0',
    true,
  ),
  'CC-BY-SA-4.0': cc(
    'CC-BY-SA-4.0',
    'CC BY-SA 4.0',
    'Creative Commons Attribution Share Alike (CC-BY-SA) 4.0 License',
    'licenses/by-sa/4.0',
    false,
  ),
  'CC-BY-NC-SA-4.0': cc(
    'CC-BY-NC-SA-4.0',
    'CC BY-NC-SA 4.0',
    'Creative Commons Attribution Non Commercial Share Alike (CC-BY-NC-SA) 4.0 License',
    'licenses/by-nc-sa/4.0',
    false,
  ),
  'CC-BY-NC-ND-4.0': cc(
    'CC-BY-NC-ND-4.0',
    'CC BY-NC-ND 4.0',
    'Creative Commons Attribution Non Commercial No Derivatives (CC-BY-NC-ND) 4.0 License',
    'licenses/by-nc-nd/4.0',
    false,
  ),
  'all-rights-reserved': { id: 'all-rights-reserved', name: 'All rights reserved', title: 'All rights reserved', url: null, gbif: false },
};

export const licenseOf = (id: PublicationLicenseId): PublicationLicense => LICENSES[id];

/** What the Darwin Core preview says when GBIF would refuse the team's licence. */
export const GBIF_LICENSE_WARNING = 'LICENSE_NOT_ACCEPTED_BY_GBIF';
export const gbifLicenseWarning = (l: PublicationLicense) =>
  `GBIF publishes only CC0 1.0, CC BY 4.0 and CC BY-NC 4.0: it will refuse a dataset under ${l.name}. A team admin can change the licence in the team settings (publication_license).`;

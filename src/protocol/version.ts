import { createRequire } from 'node:module';
import semver from 'semver';

const require = createRequire(import.meta.url);
/** The package's version: what the hub reports and what the bundled reference satellite calls itself. */
export const PACKAGE_VERSION: string = (require('../../package.json') as { version: string }).version;

/*
 * SemVer, the one grammar of versions the hub and its devices share: satellite releases
 * (hub setting satellite_releases, the update command's target), mobile app releases, the
 * hub's own version. Every module compares versions through these, never the library directly.
 */

/** SemVer 2.0.0 as written (build metadata allowed); the library alone would also take " v1.2.3". */
export const isSemver = (v: unknown): v is string =>
  typeof v === 'string' && v.length <= 64 && /^\d\S*$/.test(v) && semver.parse(v) !== null;

/** The canonical form of a SemVer string (build metadata dropped): two releases with the same key are the same release. */
export const semverKey = (v: string): string => semver.parse(v)!.version;

/** Sort order by SemVer precedence, highest first. */
export const bySemverDescending = (a: string, b: string): number => semver.rcompare(a, b);

/** Whether `a` is newer than `b` by SemVer precedence. */
export const isNewerSemver = (a: string, b: string): boolean => semver.gt(a, b);

/** The highest of some SemVer strings by SemVer precedence, or null when there are none. */
export const highestSemver = (versions: Iterable<string>): string | null => semver.rsort([...versions])[0] ?? null;

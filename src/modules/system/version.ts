import semver from 'semver';
import { PACKAGE_VERSION } from '../../protocol/version.ts';

export const HUB_VERSION = PACKAGE_VERSION;

/** SemVer 2.0.0 as written (build metadata allowed); the library alone would also take " v1.2.3". */
export const isSemver = (v: unknown): v is string =>
  typeof v === 'string' && v.length <= 64 && /^\d\S*$/.test(v) && semver.parse(v) !== null;

/** The highest of some SemVer strings by SemVer precedence, or null when there are none. */
export const highestSemver = (versions: Iterable<string>): string | null => semver.rsort([...versions])[0] ?? null;

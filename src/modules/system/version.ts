import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
export const HUB_VERSION: string = (require('../../../package.json') as { version: string }).version;

/** SemVer 2.0.0 (semver.org's pattern): MAJOR.MINOR.PATCH, optional -prerelease and +build. */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

export const isSemver = (v: unknown): v is string => typeof v === 'string' && v.length <= 64 && SEMVER.test(v);

const cmpInt = (a: string, b: string) => (a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0);

/** SemVer precedence: negative, zero or positive; build metadata is ignored. Both must be valid. */
export function compareSemver(a: string, b: string): number {
  const [, a1, a2, a3, apre] = SEMVER.exec(a)!;
  const [, b1, b2, b3, bpre] = SEMVER.exec(b)!;
  const core = cmpInt(a1, b1) || cmpInt(a2, b2) || cmpInt(a3, b3);
  if (core !== 0) return Math.sign(core);
  if (apre === undefined || bpre === undefined) return apre === bpre ? 0 : apre === undefined ? 1 : -1;
  const x = apre.split('.');
  const y = bpre.split('.');
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const xn = /^\d+$/.test(x[i]);
    const yn = /^\d+$/.test(y[i]);
    if (xn && yn) {
      const c = cmpInt(x[i], y[i]);
      if (c !== 0) return Math.sign(c);
    } else if (xn !== yn) return xn ? -1 : 1;
    else if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return Math.sign(x.length - y.length);
}

/** The highest of some SemVer strings, or null when there are none. */
export const highestSemver = (versions: Iterable<string>): string | null => {
  let best: string | null = null;
  for (const v of versions) if (best === null || compareSemver(v, best) > 0) best = v;
  return best;
};

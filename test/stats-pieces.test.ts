/**
 * The cutting of a window into aggregate periods and row edges (src/modules/stats/pieces.ts):
 * every instant must be counted exactly once inside the window and never outside it, whatever
 * years, months, days and signed corrections the cut uses.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { piecesOf } from '../src/modules/stats/pieces.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function periodEnd(grain: 'day' | 'month' | 'year', start: number): number {
  const d = new Date(start);
  if (grain === 'day') return start + DAY;
  if (grain === 'month') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return Date.UTC(d.getUTCFullYear() + 1, 0, 1);
}

/** How many times the pieces count the instant t (signed). */
function coverage(p: ReturnType<typeof piecesOf>, t: number): number {
  let n = 0;
  for (const x of p.periods) {
    const start = Date.parse(`${x.period}T00:00:00Z`);
    if (t >= start && t < periodEnd(x.grain, start)) n += x.sign;
  }
  for (const r of p.raws) if (t >= r.from.getTime() && t < r.to.getTime()) n += r.sign;
  return n;
}

describe('cutting a window into aggregate pieces', () => {
  test('every instant of a window counts once, every other instant not at all', () => {
    let x = 7;
    const rnd = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
    const base = Date.UTC(2024, 0, 1);
    for (let i = 0; i < 300; i++) {
      const from = base + Math.floor(rnd() * 900 * DAY) + Math.floor(rnd() * 24) * HOUR + 30 * 60_000;
      const to = from + Math.floor(rnd() * (i % 3 === 0 ? 800 : 120) * DAY) + Math.floor(rnd() * 24) * HOUR;
      const p = piecesOf([{ from: new Date(from), to: new Date(to), group: 0 }]);
      for (let t = from - 3 * DAY; t < to + 3 * DAY; t += 7 * HOUR + 13 * 60_000) {
        assert.equal(
          coverage(p, t),
          t >= from && t < to ? 1 : 0,
          `window ${new Date(from).toISOString()}…${new Date(to).toISOString()} at ${new Date(t).toISOString()}`,
        );
      }
    }
  });

  test('a year-long window reads a year and a month at each end instead of twelve months', () => {
    // A rolling year in Berlin: 2025-11-26 to 2026-11-26 local midnight.
    const p = piecesOf([{ from: new Date('2025-11-25T23:00:00Z'), to: new Date('2026-11-25T23:00:00Z'), group: 0 }]);
    const byGrain = (g: string) => p.periods.filter((x) => x.grain === g).map((x) => `${x.sign > 0 ? '+' : '-'}${x.period}`);
    assert.deepEqual(byGrain('year'), ['+2026-01-01']);
    assert.deepEqual(byGrain('month'), ['+2025-12-01', '-2026-12-01']);
    // A calendar year in Berlin is its UTC year with an hour moved at each end.
    const cal = piecesOf([{ from: new Date('2024-12-31T23:00:00Z'), to: new Date('2025-12-31T23:00:00Z'), group: 0 }]);
    assert.deepEqual(
      cal.periods.map((x) => `${x.grain} ${x.sign} ${x.period}`),
      ['year 1 2025-01-01'],
    );
    assert.equal(cal.raws.length, 2);
  });

  test('seven months keep their months: a year and six corrections would read more', () => {
    const p = piecesOf([{ from: new Date('2025-07-01T00:00:00Z'), to: new Date('2026-02-01T00:00:00Z'), group: 0 }]);
    assert.equal(p.periods.filter((x) => x.grain === 'year').length, 0);
    assert.equal(p.periods.filter((x) => x.grain === 'month').length, 7);
  });
});

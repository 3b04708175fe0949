// The dashboard's quick windows: the week follows the person's "week starts on" preference.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { presetWindow } from '../web/src/dates.ts';

// Wednesday 2026-11-25, 15:30 local time.
const now = new Date(2026, 10, 25, 15, 30);
const local = (d: Date | null) => (d ? [d.getFullYear(), d.getMonth() + 1, d.getDate(), d.getHours(), d.getMinutes()] : null);

test('this week starts on the preferred day and ends seven days later (exclusive)', () => {
  assert.deepEqual(local(presetWindow('week', now, 'monday').start), [2026, 11, 23, 0, 0]);
  assert.deepEqual(local(presetWindow('week', now, 'monday').end), [2026, 11, 30, 0, 0]);
  assert.deepEqual(local(presetWindow('week', now, 'sunday').start), [2026, 11, 22, 0, 0]);
  assert.deepEqual(local(presetWindow('week', now, 'saturday').start), [2026, 11, 21, 0, 0]);
  // On the first day of the week itself the window starts that midnight.
  assert.deepEqual(local(presetWindow('week', new Date(2026, 10, 22, 8), 'sunday').start), [2026, 11, 22, 0, 0]);
  // An unknown value falls back to Monday, the preference's default.
  assert.deepEqual(local(presetWindow('week', now, 'someday').start), [2026, 11, 23, 0, 0]);
});

test('today, this month and the last seven days', () => {
  assert.deepEqual(local(presetWindow('today', now, 'monday').start), [2026, 11, 25, 0, 0]);
  assert.deepEqual(local(presetWindow('today', now, 'monday').end), [2026, 11, 26, 0, 0]);
  assert.deepEqual(local(presetWindow('month', new Date(2026, 11, 31, 23), 'monday').start), [2026, 12, 1, 0, 0]);
  assert.deepEqual(local(presetWindow('month', new Date(2026, 11, 31, 23), 'monday').end), [2027, 1, 1, 0, 0]);
  const last7 = presetWindow('last7', now, 'monday');
  assert.equal(now.getTime() - last7.start.getTime(), 7 * 86_400_000);
  assert.equal(last7.end, null);
  assert.equal(now.getTime() - presetWindow('last30', now, 'monday').start.getTime(), 30 * 86_400_000);
});

/**
 * The hour-of-day axis of the statistics charts (issue 36, point 3): on a 390 px phone the labels
 * overlapped, 24 of them in about 300 px. categoryTicks (web/src/components/charts/ticks.ts) keeps
 * only as many as fit side by side at the longest label's width.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { categoryTicks } from '../web/src/components/charts/ticks.ts';

const HOURS_24 = Array.from({ length: 24 }, (_, h) => `${String(h).padStart(2, '0')}:00`);
const HOURS_12 = Array.from({ length: 24 }, (_, h) => `${h % 12 || 12} ${h < 12 ? 'AM' : 'PM'}`);

/** Labels of `ticks` laid out evenly over the plot do not touch: each slot is wider than its label (12 px digits are about 6.7 px wide). */
function fits(labels: string[], ticks: number[], width: number) {
  const slot = ((width - 60) / labels.length) * (ticks[1] - ticks[0]);
  return Math.max(...labels.map((l) => l.length)) * 6.7 + 4 <= slot;
}

test('a desktop chart names every hour', () => {
  assert.equal(categoryTicks(HOURS_24, 1100).length, 24);
});

test('a phone chart names every few hours, evenly, from midnight, without overlap', () => {
  for (const labels of [HOURS_24, HOURS_12]) {
    const ticks = categoryTicks(labels, 340);
    assert.ok(ticks.length >= 4 && ticks.length < 12, `${ticks.length} labels`);
    assert.equal(ticks[0], 0);
    const steps = new Set(ticks.slice(1).map((t, i) => t - ticks[i]));
    assert.equal(steps.size, 1, 'one step between labels');
    assert.ok(fits(labels, ticks, 340), `${labels[0]}… every ${[...steps][0]} h fits`);
  }
});

test('never more than 24 labels; at least one; none for no bars', () => {
  const days = Array.from({ length: 365 }, (_, i) => `d${i}`);
  assert.ok(categoryTicks(days, 5000).length <= 24);
  assert.equal(categoryTicks(HOURS_24, 10).length, 1);
  assert.deepEqual(categoryTicks([], 800), []);
});

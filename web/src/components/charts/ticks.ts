/**
 * Which category labels an x axis can show without overlapping: at most 24, and no more than fit
 * side by side in the plot's width at the longest label's size (a phone shows every fourth hour
 * of the day, a desktop every hour; issue 36).
 */

/** Glyph width of the axis font (12 px system sans: digits about 6.7 px, colon and space less) and the gap kept between labels, in px. */
const CHAR_PX = 6.5;
const GAP_PX = 8;
/** What uPlot's y axis and padding take from the canvas width. */
const Y_AXIS_PX = 60;

export function categoryTicks(labels: readonly string[], width: number, max = 24): number[] {
  if (labels.length === 0) return [];
  const longest = Math.max(...labels.map((l) => l.length));
  const fit = Math.max(1, Math.floor((width - Y_AXIS_PX) / (longest * CHAR_PX + GAP_PX)));
  const step = Math.ceil(labels.length / Math.min(max, fit));
  return labels.map((_, i) => i).filter((i) => i % step === 0);
}

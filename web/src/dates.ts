/**
 * Quick windows for the detections filters. They follow the person's "week starts on"
 * preference and the browser's local calendar; `end` is exclusive, as GET /detections reads it.
 */
export const PRESETS = ['today', 'week', 'month', 'last7', 'last30'] as const;
export type Preset = (typeof PRESETS)[number];

const FIRST_DAY: Record<string, number> = { sunday: 0, monday: 1, saturday: 6 };

export function presetWindow(preset: Preset, now: Date, startOfWeek: string): { start: Date; end: Date | null } {
  const midnight = new Date(now.getFullYear(), now.getMonth(), now.getDate());
  const shift = (d: Date, days: number) => new Date(d.getFullYear(), d.getMonth(), d.getDate() + days);
  switch (preset) {
    case 'today':
      return { start: midnight, end: shift(midnight, 1) };
    case 'week': {
      const back = (now.getDay() - (FIRST_DAY[startOfWeek] ?? 1) + 7) % 7;
      const start = shift(midnight, -back);
      return { start, end: shift(start, 7) };
    }
    case 'month':
      return { start: new Date(now.getFullYear(), now.getMonth(), 1), end: new Date(now.getFullYear(), now.getMonth() + 1, 1) };
    case 'last7':
    case 'last30':
      // A rolling window up to now: open at the end so detections arriving later still show.
      return { start: new Date(now.getTime() - (preset === 'last7' ? 7 : 30) * 86_400_000), end: null };
  }
}

import * as SunCalc from 'suncalc';

/** One recording window of a satellite's schedule (setting `recording_schedule`, spec protocol §2 config). */
export interface ScheduleWindow {
  start: string | number;
  end: string | number;
  reference: 'sunrise' | 'sunset' | 'absolute';
}

export interface ResolvedWindow extends ScheduleWindow {
  /** ISO times for the day asked; null when a sun-relative window has no position to resolve against. */
  startsAt: string | null;
  endsAt: string | null;
}

const atMinutes = (base: Date, minutes: number) => new Date(base.getTime() + minutes * 60_000);

function absolute(day: Date, hhmm: string): Date {
  const [h, m] = hhmm.split(':').map(Number);
  return new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), h, m));
}

/**
 * The recording schedule for one UTC day with sun times from the satellite's position
 * (SunCalc, the standard solar-position algorithm the satellites use too). Absolute windows
 * are UTC HH:MM; a window ending before it starts runs past midnight.
 */
export function resolveSchedule(input: {
  profile: string;
  windows: ScheduleWindow[];
  latitude: number | null;
  longitude: number | null;
  day: Date;
}) {
  const hasPosition = input.latitude !== null && input.longitude !== null;
  const noon = new Date(Date.UTC(input.day.getUTCFullYear(), input.day.getUTCMonth(), input.day.getUTCDate(), 12));
  const sun = hasPosition ? SunCalc.getTimes(noon, input.latitude!, input.longitude!) : null;
  const valid = (d: Date | null | undefined) => (d && !Number.isNaN(d.getTime()) ? d : null);
  const sunrise = valid(sun?.sunrise);
  const sunset = valid(sun?.sunset);
  const windows: ResolvedWindow[] = input.windows.map((w) => {
    if (w.reference === 'absolute') {
      const start = absolute(noon, String(w.start));
      let end = absolute(noon, String(w.end));
      if (end <= start) end = new Date(end.getTime() + 24 * 3600_000);
      return { ...w, startsAt: start.toISOString(), endsAt: end.toISOString() };
    }
    const base = w.reference === 'sunrise' ? sunrise : sunset;
    if (!base) return { ...w, startsAt: null, endsAt: null };
    return { ...w, startsAt: atMinutes(base, Number(w.start)).toISOString(), endsAt: atMinutes(base, Number(w.end)).toISOString() };
  });
  return {
    date: noon.toISOString().slice(0, 10),
    profile: input.profile,
    latitude: input.latitude,
    longitude: input.longitude,
    sun: sun
      ? {
          dawn: valid(sun.dawn)?.toISOString() ?? null,
          sunrise: sunrise?.toISOString() ?? null,
          solarNoon: valid(sun.solarNoon)?.toISOString() ?? null,
          sunset: sunset?.toISOString() ?? null,
          dusk: valid(sun.dusk)?.toISOString() ?? null,
        }
      : null,
    windows,
  };
}

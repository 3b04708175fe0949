/**
 * The day at a glance (issue 36 point 1): request and response of GET /stats/day and of the public
 * page's GET /public/teams/:slug/day. One local day of the team's zone, species × local hour.
 */
import { Type, type Static } from 'typebox';
import { Nullable, Uuid } from '../../core/schemas.ts';

const LocalDate = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'a local date, YYYY-MM-DD' });

export const DayQuery = Type.Object(
  {
    tenantId: Type.Optional(Uuid),
    satelliteId: Type.Optional(Uuid),
    date: Type.Optional({ ...LocalDate, description: 'the local day (YYYY-MM-DD) in the team time zone; default today' }),
  },
  { additionalProperties: false },
);
export type DayQuery = Static<typeof DayQuery>;

export const PublicDayQuery = Type.Object(
  {
    date: Type.Optional(LocalDate),
    lang: Type.Optional(Type.String({ minLength: 2, maxLength: 20, pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$' })),
  },
  { additionalProperties: false },
);

const Cell = Type.Object({ count: Type.Integer(), bestConfidence: Nullable(Type.Number()) });

/** The response schema also serialises: nothing else of a row (a satellite, a position) reaches a client. */
export const DayGrid = Type.Object({
  timeZone: Type.String(),
  date: Type.String(),
  /** The day's first instant (inclusive) and the next day's (exclusive), ISO. */
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  /** The day before, and the day after (null when the day is today or later: no tomorrow yet). */
  previous: Type.String(),
  next: Nullable(Type.String()),
  today: Type.String(),
  /** The 24 local hours: where each starts and ends in this day (null: a day that skips it, DST). */
  hours: Type.Array(Type.Object({ hour: Type.Integer(), from: Nullable(Type.String()), to: Nullable(Type.String()) })),
  /** Counted calls of the day (what /stats/dashboard counts). */
  total: Type.Integer(),
  /** Species heard that day, the most recently heard first (coarse rows last, by code). */
  species: Type.Array(
    Type.Object({
      code: Type.String(),
      commonName: Type.String(),
      scientificName: Type.String(),
      count: Type.Integer(),
      /** Best calibrated confidence of the day. */
      bestConfidence: Type.Number(),
      /** The latest call's time; null on a coarse row. */
      lastDetectedAt: Nullable(Type.String({ format: 'date-time' })),
      /** A sensitive species on the public page: only the day's total, no hours, no time. */
      coarse: Type.Boolean(),
      /** 24 cells, local hour 0 to 23 (all zero on a coarse row). */
      hours: Type.Array(Cell),
    }),
  ),
});
export type DayGrid = Static<typeof DayGrid>;

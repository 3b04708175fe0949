import { Type } from 'typebox';
import { Nullable, Open, Uuid } from '../../core/schemas.ts';
import { MODES } from './repo.ts';

/**
 * Per-species thresholds as the service shows them (response schemas, so OpenAPI documents them
 * for the dashboard's generated client). Objects stay open so a field added to the service still
 * reaches the client.
 */

export const SpeciesCode = Type.String({ minLength: 1, maxLength: 100 });
export const Mode = Type.Union(MODES.map((m) => Type.Literal(m)));

const Rules = {
  tenantId: Type.String(),
  /** The team's precision target (setting species_threshold_target). */
  target: Type.Number(),
  minVotes: Type.Integer(),
  minEach: Type.Integer(),
  wilsonZ: Type.Number(),
};

export const ThresholdView = {
  speciesCode: Type.String(),
  mode: Mode,
  /** The threshold in force: the pinned one, the learned one, or null. */
  threshold: Nullable(Type.Number()),
  learned: Nullable(Type.Number()),
  pinned: Nullable(Type.Number()),
  computedAt: Nullable(Type.String()),
  votes: Type.Integer(),
  confirmed: Type.Integer(),
  rejected: Type.Integer(),
  precision: Nullable(Type.Number()),
};

export const ThresholdList = Open({ ...Rules, thresholds: Type.Array(Open(ThresholdView)) });

export const HistoryEntry = Open({
  computedAt: Type.String(),
  threshold: Nullable(Type.Number()),
  votes: Type.Integer(),
  confirmed: Type.Integer(),
  rejected: Type.Integer(),
  precision: Nullable(Type.Number()),
  lowerBound: Nullable(Type.Number()),
  target: Type.Number(),
  reason: Type.String(),
});

export const ThresholdDetail = Open({ ...Rules, ...ThresholdView, history: Type.Array(HistoryEntry) });

export const TeamQuery = Type.Object({ tenantId: Type.Optional(Uuid) }, { additionalProperties: false });

export const SetThreshold = Type.Object(
  {
    tenantId: Type.Optional(Uuid),
    mode: Mode,
    threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false },
);

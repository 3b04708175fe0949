import { Type } from 'typebox';
import { Open } from '../../core/schemas.ts';

/** Species names by language: response schemas, so OpenAPI documents them for the dashboard's generated client. */

export const Languages = Open({ languages: Type.Array(Type.String()) });

export const SpeciesNames = Open({
  speciesCode: Type.String(),
  scientificName: Type.String(),
  names: Type.Record(Type.String(), Type.String()),
});

export const SpeciesNamesBatch = Open({ species: Type.Array(SpeciesNames), unknown: Type.Array(Type.String()) });

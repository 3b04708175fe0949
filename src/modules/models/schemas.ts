import { Type } from 'typebox';
import { Nullable, Open } from '../../core/schemas.ts';

/** GET /models: the enabled models a team may choose, as anyone signed in sees them. */
export const PublicModelList = Open({
  models: Type.Array(
    Open({
      id: Type.String(),
      name: Type.String(),
      version: Nullable(Type.String()),
      description: Nullable(Type.String()),
      isDefault: Type.Boolean(),
      builtin: Type.Boolean(),
      labelCount: Type.Integer(),
      knownFamily: Nullable(Type.String()),
      /** The credit its licence asks for, shown with its detections ("Powered by BirdNET …"). */
      attribution: Nullable(Type.String()),
    }),
  ),
});

import { Type } from 'typebox';
import { Nullable } from '../../core/schemas.ts';

/** A release as the admin routes answer it (presentRelease in service.ts). */
export const MobileRelease = Type.Object({
  id: Type.String(),
  version: Type.String(),
  notes: Type.String(),
  forceUpdate: Type.Boolean(),
  fileSize: Type.Number(),
  sha256: Type.String(),
  downloadUrl: Type.String({ description: 'Path of the package under the hub URL: /api/mobile/download/{id}' }),
  createdAt: Type.String(),
});

export const MobileReleaseList = Type.Object({ releases: Type.Array(MobileRelease) });

/** GET /mobile/latest: the highest release by SemVer and whether the caller should install it. */
export const MobileLatest = Type.Object({
  updateAvailable: Type.Boolean(),
  version: Nullable(Type.String()),
  downloadUrl: Nullable(Type.String()),
  fileSize: Nullable(Type.Number()),
  sha256: Nullable(Type.String()),
  forceUpdate: Type.Boolean(),
  notes: Nullable(Type.String()),
});

export const LatestQuery = Type.Object(
  { current: Type.Optional(Type.String({ maxLength: 100, description: 'The installed app version (SemVer)' })) },
  { additionalProperties: false },
);

export const ForceBody = Type.Object({ forceUpdate: Type.Boolean() }, { additionalProperties: false });

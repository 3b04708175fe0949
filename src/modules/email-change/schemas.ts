import { Type } from 'typebox';
import { Nullable } from '../../core/schemas.ts';

/** A change of address waiting for its confirmation link: where the link went, and until when it works. */
export const EmailChangeView = Type.Object({ newEmail: Type.String(), expiresAt: Type.String() });
export type EmailChangeView = { newEmail: string; expiresAt: string };

/** `emailChange` of GET /auth/me and PUT /auth/me/profile: null when no change is waiting. */
export const PendingEmailChange = Nullable(EmailChangeView);

/** The raw hex token of a confirmation or undo link. */
export const EmailChangeToken = Type.String({ pattern: '^[0-9a-f]{64}$' });

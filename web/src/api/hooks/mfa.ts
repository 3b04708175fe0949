/** The person's second factors: the authenticator app, backup codes, remembered devices and passkeys. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, data } from '../client';
import { createCredential } from '../../webauthn';
import { accountKeys } from './account';

export type TotpEnrollment = { qrDataUrl: string; manualKey: string };

/**
 * Enrolling an authenticator app (begin, confirm with a code, cancel), turning the second factor off and
 * regenerating backup codes. The person's state lives in /auth/me, so each change that alters it refetches the
 * person after the page's own `on*` callback.
 */
export function useTotpMutations(on: {
  begun: (enrollment: TotpEnrollment) => void;
  confirmed: (backupCodes: string[]) => void;
  cancelled: () => void;
  disabled: () => void;
  regenerated: (backupCodes: string[]) => void;
}) {
  const qc = useQueryClient();
  const refresh = () => qc.invalidateQueries({ queryKey: accountKeys.me });
  return {
    begin: useMutation({
      mutationFn: () => data<TotpEnrollment>(api.POST('/api/auth/mfa/totp/begin')),
      onSuccess: (r) => on.begun(r),
    }),
    confirm: useMutation({
      mutationFn: (code: string) => data<{ backupCodes: string[] }>(api.POST('/api/auth/mfa/totp/confirm', { body: { code } })),
      onSuccess: (r) => {
        on.confirmed(r.backupCodes);
        void refresh();
      },
    }),
    cancel: useMutation({ mutationFn: () => data(api.POST('/api/auth/mfa/totp/cancel')), onSuccess: () => on.cancelled() }),
    disable: useMutation({
      mutationFn: (password: string) => data(api.POST('/api/auth/mfa/disable', { body: { password } })),
      onSuccess: () => {
        on.disabled();
        void refresh();
      },
    }),
    regenerateBackupCodes: useMutation({
      mutationFn: (password: string) =>
        data<{ backupCodes: string[] }>(api.POST('/api/auth/mfa/backup-codes/regenerate', { body: { password } })),
      onSuccess: (r) => {
        on.regenerated(r.backupCodes);
        void refresh();
      },
    }),
  };
}

/** Forgets a remembered device; settles once the person has been refetched. */
export function useForgetDevice() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => data(api.DELETE('/api/auth/mfa/remembered-devices/{id}', { params: { path: { id } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: accountKeys.me }),
  });
}

/** Adding a passkey (the browser's ceremony between begin and finish) and removing one. */
export function usePasskeyMutations(onAdded: () => void) {
  const qc = useQueryClient();
  return {
    add: useMutation({
      mutationFn: async (name: string) => {
        const options = await data<unknown>(api.POST('/api/auth/mfa/passkeys/register/begin'));
        const response = await createCredential(options);
        return data(
          api.POST('/api/auth/mfa/passkeys/register/finish', {
            body: { response: response as never, ...(name ? { name } : {}) },
          }),
        );
      },
      onSuccess: () => {
        onAdded();
        void qc.invalidateQueries({ queryKey: accountKeys.me });
      },
    }),
    remove: useMutation({
      mutationFn: (id: string) => data(api.DELETE('/api/auth/mfa/passkeys/{id}', { params: { path: { id } } })),
      onSuccess: () => qc.invalidateQueries({ queryKey: accountKeys.me }),
    }),
  };
}

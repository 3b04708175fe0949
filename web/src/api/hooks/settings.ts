/** Effective settings of one scope: a satellite, a team, or the hub. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, type Body, type RequestBody } from '../client';

export type EffectiveSettings = Body<'/api/settings/effective', 'get'>;
export type SettingEntry = EffectiveSettings['settings'][number];
export type Scope = { satelliteId: string } | { tenantId: string } | { level: 'hub' };

export const settingKeys = { effective: (scope: Scope) => ['effective', scope] as const };

export function useEffectiveSettings(scope: Scope, enabled = true) {
  return useQuery({
    queryKey: settingKeys.effective(scope),
    enabled,
    queryFn: () => data(api.GET('/api/settings/effective', { params: { query: scope } })),
  });
}

/** Saves values or may-override switches of the scope; the answer replaces the cached table. */
export function useSaveSettings(scope: Scope, onSaved?: () => void) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: RequestBody<'/api/settings/effective', 'patch'>) =>
      data(api.PATCH('/api/settings/effective', { params: { query: scope }, body })),
    onSuccess: (res) => {
      qc.setQueryData(settingKeys.effective(scope), res);
      onSaved?.();
    },
  });
}

export type SettingDefinition = Body<'/api/settings/definitions', 'get'>['settings'][number];

/** The registry (types, ranges, options, units, descriptions): fixed for a hub version. */
export function useSettingDefinitions() {
  return useQuery({
    queryKey: ['setting-definitions'] as const,
    queryFn: () => data(api.GET('/api/settings/definitions')),
    staleTime: Infinity,
  });
}

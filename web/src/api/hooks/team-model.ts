/** Which model classifies a team's chunks: its own pick (setting inference_model), else the hub default. */
import { useQuery } from '@tanstack/react-query';
import { api, data } from '../client';
import { useEffectiveSettings } from './settings';

export function useTeamModel(tenantId: string | null) {
  const models = useQuery({ queryKey: ['models'], queryFn: () => data(api.GET('/api/models')), staleTime: 60_000 });
  const settings = useEffectiveSettings({ tenantId: tenantId ?? '' }, tenantId !== null);
  if (!models.data || !settings.data) return null;
  const picked = settings.data.settings.find((s) => s.key === 'inference_model')?.value;
  const list = models.data.models;
  return list.find((m) => m.id === picked) ?? list.find((m) => m.isDefault) ?? null;
}

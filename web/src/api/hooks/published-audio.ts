/**
 * Published recordings (issue 34): the public links a team's exports created for GBIF,
 * iNaturalist and xeno-canto (team admins), revoking one or all, and whether the team publishes
 * at all (team setting publish_audio).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, type Body } from '../client';
import { useEffectiveSettings } from './settings';

export type PublishedRecording = Body<'/api/export/published-audio', 'get'>['recordings'][number];

export const publishedKeys = { list: (tenantId: string | null) => ['published-audio', tenantId] as const };

/** Whether the team publishes recordings (publish_audio); undefined while loading. */
export function usePublishesAudio(tenantId: string | null): boolean | undefined {
  const settings = useEffectiveSettings({ tenantId: tenantId ?? '' }, tenantId !== null);
  const v = settings.data?.settings.find((s) => s.key === 'publish_audio')?.value;
  return settings.data ? v === true : undefined;
}

/** The team's published recordings, newest first (admins). */
export function usePublishedRecordings(tenantId: string | null, enabled = true) {
  return useQuery({
    queryKey: publishedKeys.list(tenantId),
    enabled: tenantId !== null && enabled,
    queryFn: () => data(api.GET('/api/export/published-audio', { params: { query: { tenantId: tenantId!, limit: 200 } } })),
  });
}

/** Revoking one link, and every link of the team; each refreshes the list. */
export function useRevokePublished(tenantId: string) {
  const qc = useQueryClient();
  const refresh = () => void qc.invalidateQueries({ queryKey: publishedKeys.list(tenantId) });
  return {
    one: useMutation({
      mutationFn: (id: string) => data(api.DELETE('/api/export/published-audio/{id}', { params: { path: { id } } })),
      onSuccess: refresh,
    }),
    all: useMutation({
      mutationFn: () => data(api.POST('/api/export/published-audio/revoke-all', { body: { tenantId } })),
      onSuccess: refresh,
    }),
  };
}

/** Mobile app releases (hub admin): the 20 most recent uploads and their mutations. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, upload, type Body } from '../client';

export type MobileRelease = Body<'/api/mobile/releases', 'get'>['releases'][number];

export const mobileKeys = {
  releases: ['mobile-releases'] as const,
};

export function useMobileReleases() {
  return useQuery({ queryKey: mobileKeys.releases, queryFn: () => data(api.GET('/api/mobile/releases')) });
}

/** Upload, force toggle and delete; each refreshes the list. */
export function useMobileReleaseMutations() {
  const qc = useQueryClient();
  const refresh = () => qc.invalidateQueries({ queryKey: mobileKeys.releases });
  return {
    add: useMutation({ mutationFn: (form: FormData) => upload<MobileRelease>('/api/mobile/upload', form), onSuccess: refresh }),
    toggleForce: useMutation({
      mutationFn: (r: MobileRelease) =>
        data(api.PUT('/api/mobile/releases/{id}', { params: { path: { id: r.id } }, body: { forceUpdate: !r.forceUpdate } })),
      onSuccess: refresh,
    }),
    remove: useMutation({
      mutationFn: (id: string) => data(api.DELETE('/api/mobile/releases/{id}', { params: { path: { id } } })),
      onSuccess: refresh,
    }),
  };
}

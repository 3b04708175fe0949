/** Species photos: statuses with credit for the species a page shows, a species' gallery, and the hub admin's image cache. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, type Body } from '../client';

export type SpeciesPhoto = Body<'/api/species/images', 'post'>['images'][number];
export type SpeciesGallery = Body<'/api/species/image-gallery', 'get'>;
export type ImageCacheStats = Body<'/api/species/image-cache/stats', 'get'>;

export const speciesImageKeys = {
  all: ['species-images'] as const,
  photos: (codes: readonly string[]) => ['species-images', 'photos', [...codes].sort().join(',')] as const,
  gallery: (code: string) => ['species-images', 'gallery', code] as const,
  stats: ['species-images', 'cache-stats'] as const,
};

/** The web client's display-copy fallback (spec §8): originals above this come as the display copy. */
export const MAX_IMAGE_BYTES = 8 * 1024 * 1024;

/** Photo statuses of the codes (at most 200); asks again every few seconds while one is pending. */
export function useSpeciesPhotos(codes: readonly string[]) {
  const unique = [...new Set(codes)].slice(0, 200);
  const q = useQuery({
    queryKey: speciesImageKeys.photos(unique),
    enabled: unique.length > 0,
    staleTime: 60_000,
    queryFn: () => data(api.POST('/api/species/images', { body: { codes: unique } })),
    refetchInterval: (query) => (query.state.data?.images.some((i) => i.status === 'pending') ? 5_000 : false),
  });
  const byCode = new Map((q.data?.images ?? []).map((i) => [i.code, i]));
  return { ...q, byCode };
}

export function useSpeciesGallery(code: string) {
  return useQuery({
    queryKey: speciesImageKeys.gallery(code),
    queryFn: () => data(api.GET('/api/species/image-gallery', { params: { query: { code } } })),
    refetchInterval: (query) => (query.state.data?.status === 'pending' ? 5_000 : false),
  });
}

export function useImageCacheStats() {
  return useQuery({ queryKey: speciesImageKeys.stats, queryFn: () => data(api.GET('/api/species/image-cache/stats')) });
}

export function useImageCacheActions() {
  const qc = useQueryClient();
  const refresh = () => void qc.invalidateQueries({ queryKey: speciesImageKeys.all });
  return {
    clear: useMutation({ mutationFn: () => data(api.POST('/api/species/image-cache/clear')), onSuccess: refresh }),
    retry: useMutation({ mutationFn: () => data(api.POST('/api/species/image-cache/retry')), onSuccess: refresh }),
    recrop: useMutation({ mutationFn: () => data(api.POST('/api/species/image-cache/recrop')), onSuccess: refresh }),
  };
}

/** A shared detection as a visitor without an account sees it. */
import { useQuery } from '@tanstack/react-query';
import { api, data, type Body } from '../client';

export type SharedDetection = Body<'/api/share/detection/{id}/{token}', 'get'>;

export const shareKeys = { detection: (id: string, token: string) => ['shared', id, token] as const };

export function useSharedDetection(id: string, token: string) {
  return useQuery({
    queryKey: shareKeys.detection(id, token),
    queryFn: () => data(api.GET('/api/share/detection/{id}/{token}', { params: { path: { id, token } } })),
  });
}

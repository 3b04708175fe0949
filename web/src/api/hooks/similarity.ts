/** Search by sound (issue 35 point 4): a detection's similar calls, and "label all like this". */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, type Body } from '../client';
import { detectionKeys } from './detections';

export type SimilarCalls = Body<'/api/detections/{id}/similar', 'get'>;
export type SimilarCall = SimilarCalls['similar'][number];
export type LabelProposals = Body<'/api/detections/{id}/similar/proposals', 'get'>;
export type BulkVote = LabelProposals['vote'] & ('confirm' | 'reject');

const similarKey = (id: string) => ['similar-calls', id] as const;

export function useSimilarCalls(id: string, limit: number) {
  return useQuery({
    queryKey: [...similarKey(id), limit],
    queryFn: () => data(api.GET('/api/detections/{id}/similar', { params: { path: { id }, query: { limit } } })),
  });
}

/** Step 1 of "label all like this": the votes it would cast, for the person to review (casts nothing). */
export function useLabelProposals(id: string) {
  return useMutation({
    mutationFn: (q: { vote: BulkVote; minSimilarity: number }) =>
      data(api.GET('/api/detections/{id}/similar/proposals', { params: { path: { id }, query: { ...q, limit: 50 } } })),
  });
}

/** Step 2: casts the vote on the proposals the person kept; the lists and votes shown are read again. */
export function useLabelSimilar(id: string, onDone: () => void) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (b: { vote: BulkVote; minSimilarity: number; detectionIds: string[] }) =>
      data(api.POST('/api/detections/{id}/similar/label', { params: { path: { id } }, body: b })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: similarKey(id) });
      void qc.invalidateQueries({ queryKey: detectionKeys.lists });
      onDone();
    },
  });
}

/** Detections: the list, one detection, votes, annotations, comments, share links and the species summaries. */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, type Body, type Query, type RequestBody } from '../client';

export type DetectionList = Body<'/api/detections', 'get'>;
export type Detection = DetectionList['detections'][number];
export type DetectionDetail = Body<'/api/detections/{id}', 'get'>;
export type Vote = RequestBody<'/api/detections/{id}/verify', 'post'>['vote'];
export type Annotation = Body<'/api/detections/{id}/annotations', 'get'>['annotations'][number];
export type Comment = Body<'/api/detections/{id}/comments', 'get'>['comments'][number];
export type DetectionQuery = Query<'/api/detections', 'get'>;
type WindowQuery = { tenantId: string; start: string; end: string };
/** A time-frequency box drawn on the spectrogram. */
export interface Box {
  timeStartMs: number;
  timeEndMs: number;
  freqLowHz: number;
  freqHighHz: number;
}

export const detectionKeys = {
  /** Every list of every team (a new annotation may change any of them). */
  lists: ['detections'] as const,
  listsOf: (tenantId: string | null) => ['detections', tenantId] as const,
  list: (tenantId: string | null, filterKey: string, page: number) => ['detections', tenantId, filterKey, page] as const,
  one: (id: string) => ['detection', id] as const,
  votes: (tenantId: string | null, ids: string) => ['votes', tenantId, ids] as const,
  annotations: (id: string) => ['annotations', id] as const,
  comments: (id: string) => ['comments', id] as const,
  summary: (tenantId: string | null, start: string, end: string) => ['species-summary', tenantId, start, end] as const,
  speciesTimeline: (tenantId: string | null, start: string, end: string) => ['species-timeline', tenantId, start, end] as const,
};

/** One page of the list; `filterKey` names the filter set, `query` is what is sent for it. */
export function useDetections(tenantId: string | null, filterKey: string, page: number, query: () => DetectionQuery) {
  return useQuery({
    queryKey: detectionKeys.list(tenantId, filterKey, page),
    enabled: tenantId !== null,
    placeholderData: keepPreviousData,
    queryFn: () => data(api.GET('/api/detections', { params: { query: query() } })),
  });
}

export function useDetection(id: string) {
  return useQuery({ queryKey: detectionKeys.one(id), queryFn: () => data(api.GET('/api/detections/{id}', { params: { path: { id } } })) });
}

/** The caller's own votes on the detections on screen (`ids` comma-separated). */
export function useMyVotes(tenantId: string | null, ids: string, enabled: boolean) {
  return useQuery({
    queryKey: detectionKeys.votes(tenantId, ids),
    enabled,
    queryFn: () => data(api.GET('/api/detections/votes', { params: { query: { ids } } })),
  });
}

export function useAnnotations(id: string) {
  return useQuery({
    queryKey: detectionKeys.annotations(id),
    queryFn: () => data(api.GET('/api/detections/{id}/annotations', { params: { path: { id } } })),
  });
}

export function useComments(id: string) {
  return useQuery({
    queryKey: detectionKeys.comments(id),
    queryFn: () => data(api.GET('/api/detections/{id}/comments', { params: { path: { id } } })),
  });
}

/** Detections per species over a window. */
export function useSpeciesSummary(tenantId: string | null, start: string, end: string) {
  const query: WindowQuery = { tenantId: tenantId!, start, end };
  return useQuery({
    queryKey: detectionKeys.summary(tenantId, start, end),
    enabled: tenantId !== null,
    placeholderData: keepPreviousData,
    queryFn: () => data(api.GET('/api/detections/summary', { params: { query } })),
  });
}

/** Detections per species and time bucket over a window. */
export function useSpeciesTimeline(tenantId: string | null, start: string, end: string) {
  const query: WindowQuery = { tenantId: tenantId!, start, end };
  return useQuery({
    queryKey: detectionKeys.speciesTimeline(tenantId, start, end),
    enabled: tenantId !== null,
    placeholderData: keepPreviousData,
    queryFn: () => data(api.GET('/api/detections/species-timeline', { params: { query } })),
  });
}

/** Votes on a detection of the list page on screen, writing the answer into that page and the votes without a refetch. */
export function useVote(tenantId: string | null, filterKey: string, page: number, ids: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, vote }: { id: string; vote: Vote }) =>
      data(api.POST('/api/detections/{id}/verify', { params: { path: { id } }, body: { vote } })),
    onSuccess: (res) => {
      qc.setQueryData<DetectionList>(detectionKeys.list(tenantId, filterKey, page), (old) =>
        old
          ? { ...old, detections: old.detections.map((d) => (d.id === res.id ? { ...d, verificationStatus: res.verificationStatus } : d)) }
          : old,
      );
      qc.setQueryData<{ votes: Record<string, Vote> }>(detectionKeys.votes(tenantId, ids), (old) => ({
        votes: { ...(old?.votes ?? {}), [res.id]: res.myVote },
      }));
    },
  });
}

/** Annotates a detection with a box and a vote; `onAnnotated` runs before the annotations, the detection and every list refresh. */
export function useAnnotate(id: string, onAnnotated: () => void) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ box, vote, notes }: { box: Box; vote: Vote; notes: string }) =>
      data(api.POST('/api/detections/{id}/annotate', { params: { path: { id } }, body: { vote, ...box, notes: notes || undefined } })),
    onSuccess: () => {
      onAnnotated();
      void qc.invalidateQueries({ queryKey: detectionKeys.annotations(id) });
      void qc.invalidateQueries({ queryKey: detectionKeys.one(id) });
      void qc.invalidateQueries({ queryKey: detectionKeys.lists });
    },
  });
}

/** Adds a comment; `onAdded` runs before the comments refresh. */
export function useAddComment(id: string, onAdded: () => void) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (text: string) => data(api.POST('/api/detections/{id}/comments', { params: { path: { id } }, body: { text } })),
    onSuccess: () => {
      onAdded();
      void qc.invalidateQueries({ queryKey: detectionKeys.comments(id) });
    },
  });
}

/** Asks for a share link on demand (each call a fresh link), hence a mutation though it is a GET. */
export function useShareLink(id: string) {
  return useMutation({
    mutationFn: () => data(api.GET('/api/detections/{id}/share', { params: { path: { id } } })),
  });
}

/** A vote from the detection's own page: the detection, the caller's votes and every list refresh. */
export function useVoteOnDetail(id: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (vote: Vote) => data(api.POST('/api/detections/{id}/verify', { params: { path: { id } }, body: { vote } })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: detectionKeys.one(id) });
      void qc.invalidateQueries({ queryKey: detectionKeys.lists });
      void qc.invalidateQueries({ queryKey: ['detection-votes-of', id] });
    },
  });
}

/** The caller's own vote on one detection (null without one). */
export function useMyVote(id: string, enabled: boolean) {
  return useQuery({
    queryKey: ['detection-votes-of', id],
    enabled,
    queryFn: async () => (await data(api.GET('/api/detections/votes', { params: { query: { ids: id } } }))).votes[id] ?? null,
  });
}

/** Detections: the list, one detection, votes, annotations, comments, share links and the species summaries. */
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, data, type Body, type Query, type RequestBody } from '../client';

export type DetectionList = Body<'/api/detections', 'get'>;
export type Detection = DetectionList['detections'][number];
export type DetectionDetail = Body<'/api/detections/{id}', 'get'>;
export type Vote = RequestBody<'/api/detections/{id}/verify', 'post'>['vote'];
export type Annotation = Body<'/api/detections/{id}/annotations', 'get'>['annotations'][number];
export type Comment = Body<'/api/detections/{id}/comments', 'get'>['comments'][number];
export type DetectionQuery = Query<'/api/detections', 'get'>;
type WindowQuery = { tenantId: string; start: string; end: string };

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

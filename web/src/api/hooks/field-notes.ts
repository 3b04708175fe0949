/** Field notes: the team's notes by satellite or time window; writing, editing, deleting one, and its photo. */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, data, upload, type Body, type Query, type RequestBody } from '../client';

export type FieldNoteList = Body<'/api/field-notes', 'get'>;
export type FieldNote = FieldNoteList['notes'][number];
export type FieldNoteQuery = Omit<Query<'/api/field-notes', 'get'>, 'tenantId'>;
export type FieldNoteInput = RequestBody<'/api/field-notes/{id}', 'put'>;

export const fieldNoteKeys = {
  /** Every note query of a team (a change refreshes them all: satellite page and detections). */
  of: (tenantId: string | null) => ['field-notes', tenantId] as const,
  list: (tenantId: string | null, query: FieldNoteQuery) => ['field-notes', tenantId, 'list', query] as const,
};

/** The team's notes under the query, newest first. */
export function useFieldNotes(tenantId: string | null, query: FieldNoteQuery, enabled = true) {
  return useQuery({
    queryKey: fieldNoteKeys.list(tenantId, query),
    enabled: !!tenantId && enabled,
    placeholderData: keepPreviousData,
    queryFn: () => data(api.GET('/api/field-notes', { params: { query: { ...query, tenantId: tenantId! } } })),
  });
}

/** Writing a note (then its photo, when one is given), editing and deleting; each refreshes the team's note lists. */
export function useFieldNoteMutations(tenantId: string | null) {
  const qc = useQueryClient();
  const refresh = () => void qc.invalidateQueries({ queryKey: fieldNoteKeys.of(tenantId) });
  return {
    create: useMutation({
      mutationFn: async ({ note, photo }: { note: FieldNoteInput; photo?: File | null }) => {
        const created = await data(api.POST('/api/field-notes', { body: { ...note, tenantId: tenantId! } }));
        if (!photo) return created;
        const form = new FormData();
        form.set('photo', photo);
        return upload<FieldNote>(`/api/field-notes/${encodeURIComponent(created.id)}/photo`, form);
      },
      // The note stands even when its photo is refused: refresh either way.
      onSettled: refresh,
    }),
    update: useMutation({
      mutationFn: ({ id, note }: { id: string; note: FieldNoteInput }) =>
        data(api.PUT('/api/field-notes/{id}', { params: { path: { id } }, body: note })),
      onSuccess: refresh,
    }),
    remove: useMutation({
      mutationFn: (id: string) => data(api.DELETE('/api/field-notes/{id}', { params: { path: { id } } })),
      onSuccess: refresh,
    }),
  };
}

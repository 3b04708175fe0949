/**
 * Field notes: the list (a satellite's, or a time window's on the Detections page) and, for
 * members, a small form to add one: text, time, an optional photo and, when asked, a position
 * from the satellite or the browser. Authors edit their own notes; authors and admins delete.
 */
import { useId, useState, type FormEvent } from 'react';
import { useFieldNoteMutations, useFieldNotes, type FieldNote, type FieldNoteQuery } from '../../api/hooks/field-notes';
import { useT } from '../../i18n';
import { atLeast } from '../../roles';
import { useFormat, useSession } from '../../session';
import { EmptyNote, ErrorText, Field, fieldError, formError, Loading } from '../ui';
import { LIMITS } from '../../limits';
import { DateInput } from '../DateInput';

const MAX_TEXT = LIMITS.fieldNote.maxLength;
const PHOTO_TYPES = 'image/jpeg,image/png,image/webp';

/** A datetime-local value for an instant, in the browser's zone. */
const toLocal = (d: Date) => new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
const round = (x: number) => Math.round(x * 1e6) / 1e6;

interface Position {
  latitude: number;
  longitude: number;
}

export function FieldNotes({
  tenantId,
  query,
  satellite,
  compose = false,
  title,
}: {
  tenantId: string;
  query: FieldNoteQuery;
  /** The satellite page's satellite: new notes name it and may take its position. */
  satellite?: { id: string; latitude: number | null; longitude: number | null };
  /** Show the "Add a note" form (members). */
  compose?: boolean;
  title?: string;
}) {
  const t = useT();
  const { role } = useSession();
  const notes = useFieldNotes(tenantId, query);
  const canWrite = compose && atLeast(role, 'member');
  const list = notes.data?.notes ?? [];
  const headingId = useId();

  return (
    <section className="field-notes" aria-labelledby={headingId}>
      <h2 id={headingId}>{title ?? t('notes.title')}</h2>
      {canWrite ? <AddNote tenantId={tenantId} satellite={satellite} /> : null}
      <ErrorText error={notes.error} />
      {notes.isLoading ? <Loading /> : null}
      {!notes.isLoading && list.length === 0 ? <EmptyNote>{t('notes.none')}</EmptyNote> : null}
      <ul className="notes" aria-label={title ?? t('notes.title')}>
        {list.map((n) => (
          <NoteItem key={n.id} note={n} tenantId={tenantId} showSatellite={!satellite} />
        ))}
      </ul>
      {notes.data && notes.data.total > list.length ? (
        <p className="muted small">{t('notes.more', { shown: list.length, total: notes.data.total })}</p>
      ) : null}
    </section>
  );
}

function AddNote({
  tenantId,
  satellite,
}: {
  tenantId: string;
  satellite?: { id: string; latitude: number | null; longitude: number | null };
}) {
  const t = useT();
  const fmt = useFormat();
  const { create } = useFieldNoteMutations(tenantId);
  const [text, setText] = useState('');
  const [at, setAt] = useState(() => toLocal(new Date()));
  const [photo, setPhoto] = useState<File | null>(null);
  const [position, setPosition] = useState<Position | null>(null);
  const [locating, setLocating] = useState(false);
  const [geoError, setGeoError] = useState<string | null>(null);
  // A new key empties the file input after a note is saved.
  const [formKey, setFormKey] = useState(0);
  const satPosition = satellite && satellite.latitude !== null && satellite.longitude !== null ? satellite : null;

  function locate() {
    setGeoError(null);
    if (!('geolocation' in navigator)) {
      setGeoError(t('notes.position.unavailable'));
      return;
    }
    setLocating(true);
    navigator.geolocation.getCurrentPosition(
      (p) => {
        setLocating(false);
        setPosition({ latitude: round(p.coords.latitude), longitude: round(p.coords.longitude) });
      },
      () => {
        setLocating(false);
        setGeoError(t('notes.position.refused'));
      },
      { enableHighAccuracy: true, timeout: 15_000 },
    );
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    const when = at ? new Date(at) : new Date();
    create.mutate(
      {
        note: {
          text,
          at: Number.isNaN(when.getTime()) ? undefined : when.toISOString(),
          satelliteId: satellite?.id,
          ...(position ?? {}),
        },
        photo,
      },
      {
        onSuccess: () => {
          setText('');
          setAt(toLocal(new Date()));
          setPhoto(null);
          setPosition(null);
          setFormKey((k) => k + 1);
        },
      },
    );
  }

  return (
    <form className="card" onSubmit={submit} key={formKey} aria-label={t('notes.add')}>
      <h3>{t('notes.add')}</h3>
      <Field label={t('notes.text')} error={fieldError(create.error, 'text')}>
        {(id, describedBy) => (
          <textarea
            id={id}
            aria-describedby={describedBy}
            value={text}
            onChange={(e) => setText(e.target.value)}
            maxLength={MAX_TEXT}
            rows={3}
            required
          />
        )}
      </Field>
      <div className="grid">
        <Field label={t('notes.at')} error={fieldError(create.error, 'at')}>
          {(id, describedBy) => (
            <DateInput id={id} aria-describedby={describedBy} type="datetime-local" value={at} onChange={(e) => setAt(e.target.value)} />
          )}
        </Field>
        <Field label={t('notes.photo')} hint={t('notes.photo.hint')}>
          {(id) => <input id={id} type="file" accept={PHOTO_TYPES} onChange={(e) => setPhoto(e.target.files?.[0] ?? null)} />}
        </Field>
      </div>
      <div className="row" role="group" aria-label={t('notes.position')}>
        <span>{t('notes.position')}:</span>
        <span data-testid="note-position">
          {position ? fmt.coords(position.latitude, position.longitude, 5) : t('notes.position.none')}
        </span>
        {satPosition ? (
          <button
            type="button"
            className="secondary"
            onClick={() => setPosition({ latitude: satPosition.latitude!, longitude: satPosition.longitude! })}
          >
            {t('notes.position.satellite')}
          </button>
        ) : null}
        <button type="button" className="secondary" onClick={locate} disabled={locating}>
          {locating ? t('notes.position.locating') : t('notes.position.mine')}
        </button>
        {position ? (
          <button type="button" className="secondary" onClick={() => setPosition(null)}>
            {t('notes.position.clear')}
          </button>
        ) : null}
      </div>
      {geoError ? <p className="error">{geoError}</p> : null}
      <div className="row">
        <button type="submit" disabled={create.isPending || !text.trim()}>
          {t('notes.save')}
        </button>
      </div>
      <ErrorText error={formError(create.error, ['text', 'at'])} />
    </form>
  );
}

function NoteItem({ note: n, tenantId, showSatellite }: { note: FieldNote; tenantId: string; showSatellite: boolean }) {
  const t = useT();
  const fmt = useFormat();
  const { role, me } = useSession();
  const { update, remove } = useFieldNoteMutations(tenantId);
  const [editing, setEditing] = useState<string | null>(null);
  const own = n.authorId === me.user.id;
  const canEdit = own && atLeast(role, 'member');
  const canDelete = (own && atLeast(role, 'member')) || atLeast(role, 'admin');

  return (
    <li className="note" data-testid="field-note" data-id={n.id}>
      <div className="muted small">
        <time dateTime={n.at}>{fmt.dateTime(n.at)}</time> · {n.authorName}
        {showSatellite && n.satelliteName ? ` · ${n.satelliteName}${n.satelliteId ? '' : ` (${t('notes.satelliteGone')})`}` : null}
        {n.latitude !== null && n.longitude !== null ? ` · ${fmt.coords(n.latitude, n.longitude, 5)}` : null}
      </div>
      {editing !== null ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            update.mutate(
              {
                id: n.id,
                // PUT replaces the note: what is not edited here is sent as it is.
                note: { text: editing, at: n.at, satelliteId: n.satelliteId, latitude: n.latitude, longitude: n.longitude },
              },
              { onSuccess: () => setEditing(null) },
            );
          }}
        >
          <Field label={t('notes.text')} error={fieldError(update.error, 'text')}>
            {(id, describedBy) => (
              <textarea
                id={id}
                aria-describedby={describedBy}
                value={editing}
                onChange={(e) => setEditing(e.target.value)}
                maxLength={MAX_TEXT}
                rows={3}
              />
            )}
          </Field>
          <div className="row">
            <button type="submit" disabled={update.isPending || !editing.trim()}>
              {t('common.save')}
            </button>
            <button type="button" className="secondary" onClick={() => setEditing(null)}>
              {t('common.cancel')}
            </button>
          </div>
          <ErrorText error={formError(update.error, ['text'])} />
        </form>
      ) : (
        <p className="note-text">{n.text}</p>
      )}
      {n.photoUrl ? (
        <a href={n.photoUrl} target="_blank" rel="noreferrer">
          <img className="note-photo" src={n.photoUrl} alt={t('notes.photo.alt', { author: n.authorName })} loading="lazy" />
        </a>
      ) : null}
      {editing === null && (canEdit || canDelete) ? (
        <div className="row">
          {canEdit ? (
            <button type="button" className="secondary" onClick={() => setEditing(n.text)}>
              {t('notes.edit')}
            </button>
          ) : null}
          {canDelete ? (
            <button
              type="button"
              className="secondary"
              disabled={remove.isPending}
              onClick={() => {
                if (window.confirm(t('notes.deleteConfirm'))) remove.mutate(n.id);
              }}
            >
              {t('common.delete')}
            </button>
          ) : null}
        </div>
      ) : null}
      <ErrorText error={remove.error} />
    </li>
  );
}

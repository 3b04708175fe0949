/** Small building blocks: an error next to what caused it, a copy button, a labelled field. */
import { useId, useState, type ReactNode, type TableHTMLAttributes } from 'react';
import { ApiError, messageOf } from '../api/client';
import { useT } from '../i18n';

export function ErrorText({ error, id }: { error: unknown; id?: string }) {
  const msg = messageOf(error);
  if (!msg) return null;
  return (
    <p className="error" role="alert" id={id}>
      {msg}
    </p>
  );
}

export function CopyButton({ text, label }: { text: string; label?: string }) {
  const t = useT();
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      className="secondary"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
        } catch {
          // Clipboard refused (plain HTTP): the text stays selectable on screen.
        }
        setDone(true);
        setTimeout(() => setDone(false), 1500);
      }}
    >
      {done ? t('common.copied') : (label ?? t('common.copy'))}
    </button>
  );
}

/**
 * A labelled field. With `error` (a field's message from fieldError) the message sits under
 * the field; children get its id for aria-describedby.
 */
export function Field({
  label,
  children,
  hint,
  error,
}: {
  label: string;
  hint?: string;
  error?: string | null;
  children: (id: string, describedBy: string | undefined) => ReactNode;
}) {
  const id = useId();
  const errId = `${id}-error`;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(id, error ? errId : undefined)}
      {hint ? <small>{hint}</small> : null}
      {error ? (
        <p className="error" role="alert" id={errId} data-field-error="">
          {error}
        </p>
      ) : null}
    </div>
  );
}

interface FieldIssue {
  in?: string;
  path?: string;
  message?: string;
}

function issues(err: unknown): FieldIssue[] {
  if (!(err instanceof ApiError) || err.code !== 'VALIDATION_FAILED' || !Array.isArray(err.details)) return [];
  return err.details as FieldIssue[];
}

/** The hub's message for one field of a refused body (VALIDATION_FAILED details), or null. */
export function fieldError(err: unknown, field: string): string | null {
  const mine = issues(err).filter((d) => d.path === field || d.path?.startsWith(`${field}.`));
  return mine.length > 0 ? mine.map((d) => d.message ?? '').join('; ') : null;
}

/** The error for the form as a whole: null when every refusal is shown next to one of `fields`. */
export function formError(err: unknown, fields: string[]): unknown {
  const list = issues(err);
  if (list.length > 0 && list.every((d) => fields.some((f) => d.path === f || d.path?.startsWith(`${f}.`)))) return null;
  return err;
}

export function Loading() {
  const t = useT();
  return <p aria-busy="true">{t('common.loading')}</p>;
}

/** A Delete button that asks once more: the question, then Delete or Cancel. */
export function ConfirmDelete({ question, pending, onDelete }: { question: string; pending: boolean; onDelete: () => void }) {
  const t = useT();
  const [confirming, setConfirming] = useState(false);
  if (!confirming) {
    return (
      <button type="button" className="secondary" onClick={() => setConfirming(true)}>
        {t('common.delete')}
      </button>
    );
  }
  return (
    <>
      <span className="small">{question}</span>
      <button type="button" className="danger" disabled={pending} onClick={onDelete}>
        {t('common.delete')}
      </button>
      <button type="button" className="secondary" onClick={() => setConfirming(false)}>
        {t('common.cancel')}
      </button>
    </>
  );
}

/**
 * A table that says why it is empty (issue 23): with no rows, the `empty` sentence (why, and
 * what to do) stands in its place. While `rows` is unknown (loading) the table shows as usual.
 */
export function Table({
  rows,
  empty,
  children,
  ...rest
}: { rows: number | undefined; empty: ReactNode; children: ReactNode } & TableHTMLAttributes<HTMLTableElement>) {
  if (rows === 0) return <EmptyNote>{empty}</EmptyNote>;
  return <table {...rest}>{children}</table>;
}

/** The sentence an empty table or list shows instead: why it is empty and what to do. */
export function EmptyNote({ children }: { children: ReactNode }) {
  return (
    <p className="empty muted" data-testid="empty-note">
      {children}
    </p>
  );
}

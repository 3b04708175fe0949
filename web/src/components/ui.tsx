/** Small building blocks: an error next to what caused it, a copy button, a labelled field. */
import { useId, useState, type ReactNode } from 'react';
import { messageOf } from '../api/client';
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

export function Field({ label, children, hint }: { label: string; hint?: string; children: (id: string) => ReactNode }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(id)}
      {hint ? <small>{hint}</small> : null}
    </div>
  );
}

export function Loading() {
  const t = useT();
  return <p aria-busy="true">{t('common.loading')}</p>;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

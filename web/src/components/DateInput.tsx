/**
 * A date or date-and-time input that follows the person's preferences (issue 23). The browser's
 * own picker stays (keyboard, calendar, screen readers), but it writes dates in the browser's
 * locale, not the person's chosen format; so the value is written out beside it in that format
 * (and the 12h/24h clock), the one the rest of the dashboard shows. docs/decisions.md says why.
 */
import { useEffect, useState, type InputHTMLAttributes } from 'react';
import { useT } from '../i18n';
import { useFormat } from '../session';

/** The local Date a date (YYYY-MM-DD) or datetime-local (YYYY-MM-DDTHH:MM) value names, or null. */
export function parseLocalInput(value: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(value);
  if (!m) return null;
  const d = new Date(+m[1], +m[2] - 1, +m[3], +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0));
  return Number.isNaN(d.getTime()) ? null : d;
}

type Props = Omit<InputHTMLAttributes<HTMLInputElement>, 'type'> & { type: 'date' | 'datetime-local' };

export function DateInput({ type, onChange, ...props }: Props) {
  const t = useT();
  const fmt = useFormat();
  const [value, setValue] = useState(String(props.value ?? props.defaultValue ?? ''));
  // Follow a new value or default from outside (a preset, the URL), as the input itself does.
  useEffect(() => {
    if (props.value !== undefined) setValue(String(props.value));
    else if (props.defaultValue !== undefined) setValue(String(props.defaultValue));
  }, [props.value, props.defaultValue]);
  const d = parseLocalInput(value);
  const shown = d ? (type === 'date' ? fmt.date(d) : fmt.dateTime(d.toISOString())) : null;
  return (
    <>
      <input
        {...props}
        type={type}
        onChange={(e) => {
          setValue(e.target.value);
          onChange?.(e);
        }}
      />
      {shown ? (
        <small className="date-shown" data-testid="date-shown" aria-live="polite">
          {t('form.dateShown', { date: shown })}
        </small>
      ) : null}
    </>
  );
}

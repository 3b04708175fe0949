/**
 * Create a team owned by the person; the hub may refuse (allow_tenant_creation), in its own words.
 * The team's time zone starts as this browser's (shown, changeable); the next step is the Fleet
 * page, where the first satellite is added.
 */
import { useMemo, useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { useT } from '../i18n';
import { useCreateTeam } from '../api/hooks/account';
import { useSession, useToast } from '../session';
import { ErrorText, Field, fieldError } from '../components/ui';
import { messageOf } from '../api/client';
import { LIMITS } from '../limits';

/** This browser's IANA zone (what the person's clock shows), UTC when it cannot tell. */
function browserZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** The zones to choose from, UTC first; the chosen one is always among them (an alias the list lacks). */
function zoneOptions(chosen: string): string[] {
  const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  const list = ['UTC', ...known.filter((z) => z !== 'UTC')];
  return list.includes(chosen) ? list : [chosen, ...list];
}

export default function CreateTeam() {
  const t = useT();
  const navigate = useNavigate();
  const toast = useToast();
  const { setTeamId } = useSession();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [timeZone, setTimeZone] = useState(browserZone);
  const zones = useMemo(() => zoneOptions(timeZone), [timeZone]);
  const create = useCreateTeam((team) => {
    setTeamId(team.id);
    if (team.zoneError) toast(messageOf(team.zoneError) ?? String(team.zoneError), 'error');
    navigate('/fleet');
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    create.mutate({ name, description, timeZone });
  }
  const nameError = fieldError(create.error, 'name');
  const descriptionError = fieldError(create.error, 'description');
  return (
    <section aria-labelledby="new-team-title" className="narrow">
      <p>
        <Link to="/teams">← {t('dir.title')}</Link>
      </p>
      <h1 id="new-team-title">{t('newTeam.title')}</h1>
      <form onSubmit={submit} className="card" aria-label={t('newTeam.title')}>
        <Field label={t('newTeam.name')} error={nameError}>
          {(id, describedBy) => (
            <input
              id={id}
              required
              maxLength={LIMITS.teamName.maxLength}
              value={name}
              onChange={(e) => setName(e.target.value)}
              aria-describedby={describedBy}
              aria-invalid={!!nameError || undefined}
            />
          )}
        </Field>
        <Field label={t('newTeam.description')} error={descriptionError}>
          {(id, describedBy) => (
            <textarea
              id={id}
              maxLength={LIMITS.teamDescription.maxLength}
              rows={3}
              value={description}
              onChange={(e) => setDescription(e.target.value)}
              aria-describedby={describedBy}
            />
          )}
        </Field>
        <Field label={t('newTeam.timeZone')} hint={t('newTeam.timeZoneHint')}>
          {(id, describedBy) => (
            <select id={id} aria-describedby={describedBy} value={timeZone} onChange={(e) => setTimeZone(e.target.value)}>
              {zones.map((z) => (
                <option key={z} value={z}>
                  {z.replaceAll('_', ' ')}
                </option>
              ))}
            </select>
          )}
        </Field>
        <ErrorText error={nameError || descriptionError ? null : create.error} />
        <button type="submit" disabled={create.isPending}>
          {t('newTeam.submit')}
        </button>
      </form>
    </section>
  );
}

/** Create a team owned by the person; the hub may refuse (allow_tenant_creation), in its own words. */
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { useT } from '../i18n';
import { useCreateTeam } from '../api/hooks/account';
import { useSession } from '../session';
import { ErrorText, Field, fieldError } from '../components/ui';
import { LIMITS } from '../limits';

export default function CreateTeam() {
  const t = useT();
  const navigate = useNavigate();
  const { setTeamId } = useSession();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const create = useCreateTeam((team) => {
    setTeamId(team.id);
    navigate('/team');
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    create.mutate({ name, description });
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
        <ErrorText error={nameError || descriptionError ? null : create.error} />
        <button type="submit" disabled={create.isPending}>
          {t('newTeam.submit')}
        </button>
      </form>
    </section>
  );
}

/** The team directory: teams accepting newcomers; join an open team or ask to join, with a message. */
import { useState } from 'react';
import { Link } from 'react-router';
import { useT } from '../i18n';
import { useDirectory, useDirectoryMembership, type DirectoryTeam } from '../api/hooks/joining';
import { EmptyNote, ErrorText, Field, Loading } from '../components/ui';
import { LIMITS } from '../limits';

function TeamCard({ c }: { c: DirectoryTeam }) {
  const t = useT();
  const [message, setMessage] = useState('');
  const { join, withdraw } = useDirectoryMembership(c.id);
  return (
    <li className="card" data-testid="team-card">
      <h2>{c.name}</h2>
      {c.description ? <p>{c.description}</p> : null}
      <p className="muted small">{t('dir.counts', { members: c.memberCount, devices: c.deviceCount })}</p>
      {c.is_member ? (
        <p>{t('dir.member')}</p>
      ) : c.has_pending ? (
        <div className="row">
          <span>{t('dir.pending')}</span>
          <button type="button" className="secondary" onClick={() => withdraw.mutate()}>
            {t('dir.withdraw')}
          </button>
        </div>
      ) : (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            join.mutate(message);
          }}
        >
          {c.policy !== 'open' ? (
            <Field label={t('dir.message')}>
              {(id) => (
                <input id={id} maxLength={LIMITS.joinMessage.maxLength} value={message} onChange={(e) => setMessage(e.target.value)} />
              )}
            </Field>
          ) : null}
          <button type="submit" disabled={join.isPending}>
            {c.policy === 'open' ? t('dir.join') : t('dir.ask')}
          </button>
        </form>
      )}
      {join.data?.status === 'requested' ? <p role="status">{t('dir.requested')}</p> : null}
      <ErrorText error={join.error ?? withdraw.error} />
    </li>
  );
}

export default function Directory() {
  const t = useT();
  const [search, setSearch] = useState('');
  const dir = useDirectory(search);
  return (
    <section aria-labelledby="dir-title">
      <div className="title-row">
        <h1 id="dir-title">{t('dir.title')}</h1>
        <Link to="/teams/new">{t('newTeam.title')}</Link>
      </div>
      <Field label={t('dir.search')}>
        {(id) => <input id={id} type="search" value={search} onChange={(e) => setSearch(e.target.value)} />}
      </Field>
      <ErrorText error={dir.error} />
      {dir.isLoading ? <Loading /> : null}
      {dir.data && !dir.data.enabled ? <p>{t('dir.off')}</p> : null}
      {dir.data?.enabled && dir.data.teams.length === 0 ? <EmptyNote>{t('dir.none')}</EmptyNote> : null}
      <ul className="plain">
        {dir.data?.teams.map((c) => (
          <TeamCard key={c.id} c={c} />
        ))}
      </ul>
    </section>
  );
}

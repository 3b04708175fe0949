/**
 * A paged audit log: the hub's whole log (admin area) or one team's activity (team page),
 * newest first. Both read the same row shape; the team feed carries no client IPs.
 */
import { useState } from 'react';
import { useAuditLog } from '../api/hooks/admin';
import { useT } from '../i18n';
import { useFormat } from '../session';
import { ErrorText, Table } from './ui';

const PAGE = 50;

export function AuditLog({ tenantId, label }: { tenantId?: string; label: string }) {
  const t = useT();
  const fmt = useFormat();
  const [offset, setOffset] = useState(0);
  const audit = useAuditLog(tenantId, PAGE, offset);
  return (
    <>
      <ErrorText error={audit.error} />
      <div className="table-wrap">
        <Table aria-label={label} rows={audit.data?.entries.length} empty={t('audit.empty')}>
          <thead>
            <tr>
              <th scope="col">{t('admin.when')}</th>
              <th scope="col">{t('admin.action')}</th>
              <th scope="col">{t('admin.actor')}</th>
              <th scope="col">{t('admin.target')}</th>
            </tr>
          </thead>
          <tbody>
            {audit.data?.entries.map((e) => (
              <tr key={e.id}>
                <td>{fmt.dateTime(e.at)}</td>
                <td>
                  <code>{e.action}</code>
                </td>
                <td>
                  {e.actorEmail ?? '—'} <span className="muted small">{e.ip ?? ''}</span>
                </td>
                <td className="small">
                  {e.targetType ?? ''} {e.targetId ?? ''}
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      </div>
      <nav className="row" aria-label={t('admin.auditPages')}>
        <button type="button" className="secondary" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          {t('det.prev')}
        </button>
        <button
          type="button"
          className="secondary"
          disabled={!audit.data || offset + PAGE >= audit.data.total}
          onClick={() => setOffset(offset + PAGE)}
        >
          {t('det.next')}
        </button>
      </nav>
    </>
  );
}

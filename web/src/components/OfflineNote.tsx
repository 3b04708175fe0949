/** One line while the device has no connection: what is shown is what the service worker kept (issue 36). */
import { useSyncExternalStore } from 'react';
import { useT } from '../i18n';

function subscribe(onChange: () => void) {
  window.addEventListener('online', onChange);
  window.addEventListener('offline', onChange);
  return () => {
    window.removeEventListener('online', onChange);
    window.removeEventListener('offline', onChange);
  };
}

export function OfflineNote() {
  const t = useT();
  const online = useSyncExternalStore(subscribe, () => navigator.onLine);
  if (online) return null;
  return (
    <p className="card banner" role="status" data-testid="offline-note">
      {t('app.offline')}
    </p>
  );
}

/**
 * Creating or editing one channel. Secrets (the signing secret, a chat webhook URL, a bot token,
 * the webhook URL itself, which may carry a token) are write-only: on edit their fields start
 * empty, and a field left empty is not sent, so the stored value is kept. "Remove secret" sends
 * `secret: null`.
 */
import { useState, type FormEvent } from 'react';
import { CHANNEL_TYPES, useChannelMutations, type AlertChannel, type ChannelConfig, type ChannelType } from '../../api/hooks/alert-rules';
import { useT } from '../../i18n';
import { ErrorText, Field } from '../ui';
import { channelTypeName } from './labels';
import { LIMITS } from '../../limits';

export function ChannelForm({ tenantId, channel, onDone }: { tenantId: string; channel: AlertChannel | null; onDone: () => void }) {
  const t = useT();
  const { save } = useChannelMutations(tenantId);
  const shown = (channel?.config ?? {}) as {
    addresses?: string[];
    url?: string;
    host?: string;
    chatId?: string;
    brokerUrl?: string;
    username?: string;
    topicPrefix?: string;
    discoveryPrefix?: string;
    apiUrl?: string;
    minConfidence?: number;
  };
  const [type, setType] = useState<ChannelType>(channel?.type ?? 'webhook');
  const [name, setName] = useState(channel?.name ?? '');
  const [addresses, setAddresses] = useState((shown.addresses ?? []).join(', '));
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [removeSecret, setRemoveSecret] = useState(false);
  const [webhookUrl, setWebhookUrl] = useState('');
  const [botToken, setBotToken] = useState('');
  const [chatId, setChatId] = useState(shown.chatId ?? '');
  const [template, setTemplate] = useState(channel?.payload_template ?? '');
  const [brokerUrl, setBrokerUrl] = useState(shown.brokerUrl ?? '');
  const [username, setUsername] = useState(shown.username ?? '');
  const [password, setPassword] = useState('');
  const [topicPrefix, setTopicPrefix] = useState(shown.topicPrefix ?? 'chorus');
  const [discoveryPrefix, setDiscoveryPrefix] = useState(shown.discoveryPrefix ?? 'homeassistant');
  const [stationToken, setStationToken] = useState('');
  const [apiUrl, setApiUrl] = useState(shown.apiUrl ?? 'https://app.birdweather.com');
  const [minConfidence, setMinConfidence] = useState(shown.minConfidence === undefined ? '' : String(shown.minConfidence));
  const editing = !!channel;
  const keep = editing ? t('channels.keep') : undefined;

  function submit(e: FormEvent) {
    e.preventDefault();
    const config: ChannelConfig = {};
    if (type === 'email')
      config.addresses = addresses
        .split(/[,\s]+/)
        .map((a) => a.trim())
        .filter(Boolean);
    if (type === 'webhook') {
      if (url.trim()) config.url = url.trim();
      if (removeSecret) config.secret = null;
      else if (secret) config.secret = secret;
    }
    if (type === 'chat_blocks' || type === 'chat_cards' || type === 'chat_embeds') {
      if (webhookUrl.trim()) config.webhookUrl = webhookUrl.trim();
    }
    if (type === 'chat_bot') {
      if (botToken.trim()) config.botToken = botToken.trim();
      if (chatId.trim()) config.chatId = chatId.trim();
    }
    if (type === 'mqtt_home_assistant') {
      config.brokerUrl = brokerUrl.trim();
      config.username = username.trim() || null;
      if (password) config.password = password;
      config.topicPrefix = topicPrefix.trim();
      config.discoveryPrefix = discoveryPrefix.trim();
    }
    if (type === 'birdweather') {
      if (stationToken.trim()) config.stationToken = stationToken.trim();
      config.apiUrl = apiUrl.trim();
    }
    if (type === 'mqtt_home_assistant' || type === 'birdweather')
      config.minConfidence = minConfidence.trim() ? Number(minConfidence) : null;
    const body = {
      type,
      name,
      config,
      ...(type === 'webhook' ? { payload_template: template.trim() ? template : null } : {}),
    };
    save.mutate({ id: channel?.id, body }, { onSuccess: onDone });
  }

  return (
    <form className="card" onSubmit={submit} aria-label={editing ? t('channels.edit') : t('channels.new')}>
      <div className="row">
        <Field label={t('channels.name')}>
          {(id) => (
            <input id={id} required maxLength={LIMITS.alertChannelName.maxLength} value={name} onChange={(e) => setName(e.target.value)} />
          )}
        </Field>
        <Field label={t('channels.type')}>
          {(id) => (
            <select id={id} value={type} disabled={editing} onChange={(e) => setType(e.target.value as ChannelType)}>
              {CHANNEL_TYPES.map((x) => (
                <option key={x} value={x}>
                  {channelTypeName(t, x)}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      {type === 'email' ? (
        <Field label={t('channels.addresses')} hint={t('channels.addresses.hint')}>
          {(id) => <textarea id={id} required rows={2} value={addresses} onChange={(e) => setAddresses(e.target.value)} />}
        </Field>
      ) : null}
      {type === 'webhook' ? (
        <>
          <Field label={t('channels.url')} hint={editing ? t('channels.keepUrl', { url: shown.url ?? '' }) : t('channels.url.hint')}>
            {(id) => (
              <input id={id} type="url" required={!editing} placeholder={shown.url} value={url} onChange={(e) => setUrl(e.target.value)} />
            )}
          </Field>
          <Field label={t('channels.secret')} hint={channel?.hasSecret ? t('channels.secretStored') : t('channels.secret.hint')}>
            {(id) => (
              <input
                id={id}
                type="password"
                autoComplete="new-password"
                disabled={removeSecret}
                value={secret}
                onChange={(e) => setSecret(e.target.value)}
              />
            )}
          </Field>
          {channel?.hasSecret ? (
            <label className="inline">
              <input type="checkbox" checked={removeSecret} onChange={(e) => setRemoveSecret(e.target.checked)} />
              {t('channels.removeSecret')}
            </label>
          ) : null}
          <Field label={t('channels.template')} hint={t('channels.template.hint')}>
            {(id) => <textarea id={id} rows={4} value={template} onChange={(e) => setTemplate(e.target.value)} />}
          </Field>
        </>
      ) : null}
      {type === 'chat_blocks' || type === 'chat_cards' || type === 'chat_embeds' ? (
        <Field label={t('channels.webhookUrl')} hint={editing ? t('channels.keepUrl', { url: shown.host ?? '' }) : undefined}>
          {(id) => <input id={id} type="url" required={!editing} value={webhookUrl} onChange={(e) => setWebhookUrl(e.target.value)} />}
        </Field>
      ) : null}
      {type === 'chat_bot' ? (
        <div className="row">
          <Field label={t('channels.botToken')} hint={keep}>
            {(id) => (
              <input
                id={id}
                type="password"
                autoComplete="off"
                required={!editing}
                value={botToken}
                onChange={(e) => setBotToken(e.target.value)}
              />
            )}
          </Field>
          <Field label={t('channels.chatId')}>
            {(id) => <input id={id} required value={chatId} onChange={(e) => setChatId(e.target.value)} />}
          </Field>
        </div>
      ) : null}
      {type === 'mqtt_home_assistant' ? (
        <>
          <p className="muted small">{t('channels.ha.help')}</p>
          <Field label={t('channels.brokerUrl')} hint={t('channels.brokerUrl.hint')}>
            {(id) => (
              <input
                id={id}
                required
                placeholder="mqtts://homeassistant.local:8883"
                value={brokerUrl}
                onChange={(e) => setBrokerUrl(e.target.value)}
              />
            )}
          </Field>
          <div className="row">
            <Field label={t('channels.username')}>
              {(id) => <input id={id} autoComplete="off" value={username} onChange={(e) => setUsername(e.target.value)} />}
            </Field>
            <Field label={t('channels.password')} hint={channel?.hasSecret ? t('channels.secretStored') : undefined}>
              {(id) => (
                <input id={id} type="password" autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} />
              )}
            </Field>
          </div>
          <div className="row">
            <Field label={t('channels.topicPrefix')}>
              {(id) => <input id={id} required value={topicPrefix} onChange={(e) => setTopicPrefix(e.target.value)} />}
            </Field>
            <Field label={t('channels.discoveryPrefix')}>
              {(id) => <input id={id} required value={discoveryPrefix} onChange={(e) => setDiscoveryPrefix(e.target.value)} />}
            </Field>
          </div>
        </>
      ) : null}
      {type === 'birdweather' ? (
        <>
          <p className="muted small">{t('channels.bw.help')}</p>
          <div className="row">
            <Field label={t('channels.stationToken')} hint={keep}>
              {(id) => (
                <input
                  id={id}
                  type="password"
                  autoComplete="off"
                  required={!editing}
                  value={stationToken}
                  onChange={(e) => setStationToken(e.target.value)}
                />
              )}
            </Field>
            <Field label={t('channels.apiUrl')}>
              {(id) => <input id={id} type="url" required value={apiUrl} onChange={(e) => setApiUrl(e.target.value)} />}
            </Field>
          </div>
        </>
      ) : null}
      {type === 'mqtt_home_assistant' || type === 'birdweather' ? (
        <Field label={t('channels.minConfidence')} hint={t('channels.minConfidence.hint')}>
          {(id) => (
            <input
              id={id}
              type="number"
              min={0}
              max={1}
              step={0.01}
              value={minConfidence}
              onChange={(e) => setMinConfidence(e.target.value)}
            />
          )}
        </Field>
      ) : null}
      <ErrorText error={save.error} />
      <div className="row">
        <button type="submit" disabled={save.isPending}>
          {t('common.save')}
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          {t('common.cancel')}
        </button>
      </div>
    </form>
  );
}

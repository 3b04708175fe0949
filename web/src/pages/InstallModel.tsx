/**
 * Hub admins: install a model in a minute (issue 31). The known families with their licence,
 * size, where they are published and their checksum; an install from a URL (POST
 * /admin/models/install, its progress polled) or from a file (the multipart upload); the
 * installed models. Chorus ships no weights: every file comes from the address the admin gives.
 */
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import {
  useAdminModels,
  useInstallStatus,
  useKnownModels,
  useModelMutations,
  useStartInstall,
  type InstallInput,
  type InstallStatus,
  type KnownFamily,
} from '../api/hooks/models';
import { peopleError } from '../api/client';
import { useT } from '../i18n';
import { useFormat } from '../session';
import { EmptyNote, ErrorText, Field } from '../components/ui';
import { LIMITS } from '../limits';

type UrlForm = Required<Pick<InstallInput, 'url' | 'name'>> & {
  labelsUrl: string;
  sha256: string;
  version: string;
  knownFamily: string;
  attribution: string;
  makeDefault: boolean;
};
const EMPTY: UrlForm = { url: '', labelsUrl: '', sha256: '', name: '', version: '', knownFamily: '', attribution: '', makeDefault: false };

export default function InstallModel() {
  const t = useT();
  const known = useKnownModels();
  const [form, setForm] = useState<UrlForm>(EMPTY);
  const families = known.data?.families ?? [];

  /** "Use this file": the URL form takes the variant's addresses, name, version and family. */
  const choose = (f: KnownFamily, v: KnownFamily['variants'][number]) =>
    setForm({
      ...EMPTY,
      url: v.modelUrl ?? '',
      labelsUrl: v.labelsUrl ?? '',
      sha256: v.sha256 ?? '',
      name: `${f.name}, ${v.name}`.slice(0, LIMITS.modelName.maxLength),
      version: f.version,
      knownFamily: f.id,
    });

  return (
    <section aria-labelledby="install-title">
      <p>
        <Link to="/admin">← {t('admin.title')}</Link>
      </p>
      <h1 id="install-title">{t('install.title')}</h1>
      <p className="muted">{t('install.intro')}</p>

      <h2>{t('install.known')}</h2>
      <ErrorText error={known.error} />
      <KnownFamilies families={families} onChoose={choose} />

      <h2>{t('install.fromUrl')}</h2>
      <UrlInstall form={form} setForm={setForm} families={families} />

      <h2>{t('install.fromFile')}</h2>
      <FileInstall families={families} />

      <h2>{t('install.installed')}</h2>
      <InstalledModels />
    </section>
  );
}

function KnownFamilies({
  families,
  onChoose,
}: {
  families: KnownFamily[];
  onChoose: (f: KnownFamily, v: KnownFamily['variants'][number]) => void;
}) {
  const t = useT();
  const fmt = useFormat();
  const use = (c: boolean | null) =>
    c === false ? t('install.nonCommercial') : c === true ? t('install.commercialOk') : t('install.readTerms');
  return (
    <div className="table-wrap">
      <table aria-label={t('install.known')}>
        <thead>
          <tr>
            <th scope="col">{t('install.family')}</th>
            <th scope="col">{t('install.licence')}</th>
            <th scope="col">{t('models.size')}</th>
            <th scope="col">{t('install.published')}</th>
            <th scope="col">SHA-256</th>
            <th scope="col" />
          </tr>
        </thead>
        <tbody>
          {families.flatMap((f) =>
            f.variants.map((v) => (
              <tr key={v.id} data-testid={`known-${v.id}`}>
                <th scope="row">
                  {f.name} <span className="small">{v.name}</span>
                  <div className="small muted">
                    {t('install.input', { seconds: f.input.seconds, khz: f.input.sampleRate / 1000 })} (<code>{f.inputFamily}</code>)
                    {f.classes ? ` · ${t('install.classes', { n: f.classes })}` : ''}
                  </div>
                </th>
                <td>
                  <a href={f.licence.url} target="_blank" rel="noreferrer">
                    {f.licence.name}
                  </a>
                  <div className="small">{use(f.licence.commercialUse)}</div>
                  <div className="small muted">{f.attribution}</div>
                </td>
                <td>{v.sizeBytes !== null ? fmt.bytes(v.sizeBytes) : (v.approxSize ?? t('install.sizeUnknown'))}</td>
                <td className="small">
                  {f.pages.map((p) => (
                    <div key={p.url}>
                      <a href={p.url} target="_blank" rel="noreferrer">
                        {p.label}
                      </a>
                    </div>
                  ))}
                </td>
                <td className="small">{v.sha256 ? <code>{v.sha256}</code> : t('install.checksumUnknown')}</td>
                <td>
                  {v.modelUrl ? (
                    <button type="button" className="secondary" onClick={() => onChoose(f, v)}>
                      {t('install.useFile')}
                    </button>
                  ) : (
                    <span className="small muted">{t('install.noOnnx')}</span>
                  )}
                </td>
              </tr>
            )),
          )}
        </tbody>
      </table>
    </div>
  );
}

function FamilySelect({
  id,
  name,
  value,
  onChange,
  families,
}: {
  id: string;
  name?: string;
  value?: string;
  onChange?: (v: string) => void;
  families: KnownFamily[];
}) {
  const t = useT();
  return (
    <select id={id} name={name} value={value} onChange={onChange ? (e) => onChange(e.target.value) : undefined}>
      <option value="">{t('install.noFamily')}</option>
      {families.map((f) => (
        <option key={f.id} value={f.id}>
          {f.name}
        </option>
      ))}
    </select>
  );
}

function UrlInstall({ form, setForm, families }: { form: UrlForm; setForm: (f: UrlForm) => void; families: KnownFamily[] }) {
  const t = useT();
  const start = useStartInstall();
  const [installId, setInstallId] = useState<string | null>(null);
  const status = useInstallStatus(installId);
  const set = <K extends keyof UrlForm>(k: K, v: UrlForm[K]) => setForm({ ...form, [k]: v });
  const catalogLabels = families.find((f) => f.id === form.knownFamily)?.labelsFromCatalog ?? false;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const opt = (s: string) => (s.trim() ? s.trim() : undefined);
    start.mutate(
      {
        url: form.url.trim(),
        name: form.name.trim(),
        labelsUrl: opt(form.labelsUrl),
        sha256: opt(form.sha256),
        version: opt(form.version),
        knownFamily: opt(form.knownFamily),
        attribution: opt(form.attribution),
        makeDefault: form.makeDefault,
      },
      { onSuccess: (s) => setInstallId(s.id) },
    );
  };
  const running = status.data ? status.data.state !== 'done' && status.data.state !== 'failed' : start.isPending;

  return (
    <form className="card" onSubmit={submit} aria-label={t('install.fromUrl')}>
      <Field label={t('install.url')}>
        {(id) => (
          <input
            id={id}
            type="url"
            required
            value={form.url}
            maxLength={LIMITS.modelUrl.maxLength}
            onChange={(e) => set('url', e.target.value)}
          />
        )}
      </Field>
      <Field label={t('install.labelsUrl')} hint={catalogLabels ? t('install.labelsFromCatalog') : t('models.labelsHint')}>
        {(id) => (
          <input
            id={id}
            type="url"
            value={form.labelsUrl}
            maxLength={LIMITS.modelUrl.maxLength}
            onChange={(e) => set('labelsUrl', e.target.value)}
          />
        )}
      </Field>
      <Field label={t('install.sha256')} hint={t('install.sha256Hint')}>
        {(id) => <input id={id} value={form.sha256} maxLength={64} spellCheck={false} onChange={(e) => set('sha256', e.target.value)} />}
      </Field>
      <Field label={t('models.name')}>
        {(id) => (
          <input id={id} required value={form.name} maxLength={LIMITS.modelName.maxLength} onChange={(e) => set('name', e.target.value)} />
        )}
      </Field>
      <Field label={t('models.version')}>
        {(id) => (
          <input id={id} value={form.version} maxLength={LIMITS.modelVersion.maxLength} onChange={(e) => set('version', e.target.value)} />
        )}
      </Field>
      <Field label={t('install.family')}>
        {(id) => <FamilySelect id={id} value={form.knownFamily} onChange={(v) => set('knownFamily', v)} families={families} />}
      </Field>
      <Field label={t('install.attribution')} hint={t('install.attributionHint')}>
        {(id) => (
          <input
            id={id}
            value={form.attribution}
            maxLength={LIMITS.modelAttribution.maxLength}
            onChange={(e) => set('attribution', e.target.value)}
          />
        )}
      </Field>
      <label className="row tight">
        <input type="checkbox" checked={form.makeDefault} onChange={(e) => set('makeDefault', e.target.checked)} />{' '}
        {t('install.makeDefault')}
      </label>
      <button type="submit" disabled={running}>
        {t('install.button')}
      </button>
      <ErrorText error={start.error} />
      <ErrorText error={status.error} />
      {status.data ? <Progress status={status.data} /> : null}
    </form>
  );
}

/** Where an install stands: the state in words, a bar while the model file arrives, the outcome. */
function Progress({ status }: { status: InstallStatus }) {
  const t = useT();
  const fmt = useFormat();
  const { state, receivedBytes, totalBytes } = status;
  return (
    <div role="status" aria-label={t('install.progress')} data-testid="install-progress" data-state={state}>
      <p>
        <strong>{t(`install.state.${state}`)}</strong>{' '}
        {state === 'downloading' || state === 'verifying' ? (
          <span className="small">{totalBytes ? `${fmt.bytes(receivedBytes)} / ${fmt.bytes(totalBytes)}` : fmt.bytes(receivedBytes)}</span>
        ) : null}
      </p>
      {state === 'downloading' ? <progress max={totalBytes ?? undefined} value={totalBytes ? receivedBytes : undefined} /> : null}
      {state === 'done' ? <p>{t('install.done', { name: status.name })}</p> : null}
      {status.error ? (
        <p className="error" role="alert">
          {peopleError(0, status.error.code, status.error.message).message}
        </p>
      ) : null}
    </div>
  );
}

function FileInstall({ families }: { families: KnownFamily[] }) {
  const t = useT();
  const { add } = useModelMutations();
  const onUpload = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const el = e.currentTarget;
    const body = new FormData(el);
    // Empty optional fields stay out: the hub reads a present field as given.
    for (const k of ['version', 'knownFamily', 'attribution']) if (!String(body.get(k) ?? '').trim()) body.delete(k);
    add.mutate(body, { onSuccess: () => el.reset() });
  };
  return (
    <form className="card" onSubmit={onUpload} aria-label={t('install.fromFile')}>
      <Field label={t('models.name')}>{(id) => <input id={id} name="name" required maxLength={LIMITS.modelName.maxLength} />}</Field>
      <Field label={t('models.version')}>{(id) => <input id={id} name="version" maxLength={LIMITS.modelVersion.maxLength} />}</Field>
      <Field label={t('install.family')}>{(id) => <FamilySelect id={id} name="knownFamily" families={families} />}</Field>
      <Field label={t('install.attribution')} hint={t('install.attributionHint')}>
        {(id) => <input id={id} name="attribution" maxLength={LIMITS.modelAttribution.maxLength} />}
      </Field>
      <Field label={t('models.onnx')}>{(id) => <input id={id} name="model" type="file" accept=".onnx" required />}</Field>
      <Field label={t('models.labelsFile')} hint={t('models.labelsHint')}>
        {(id) => <input id={id} name="labels" type="file" accept=".txt,text/plain" required />}
      </Field>
      <button type="submit" disabled={add.isPending}>
        {t('models.uploadButton')}
      </button>
      <ErrorText error={add.error} />
      {add.data ? <p role="status">{t('models.uploaded', { name: add.data.name, n: add.data.unknownLabelCount })}</p> : null}
    </form>
  );
}

function InstalledModels() {
  const t = useT();
  const fmt = useFormat();
  const models = useAdminModels();
  const list = models.data?.models ?? [];
  return (
    <>
      <ErrorText error={models.error} />
      {models.data && list.length === 0 ? <EmptyNote>{t('install.none')}</EmptyNote> : null}
      <div className="table-wrap">
        <table aria-label={t('install.installed')}>
          <thead>
            <tr>
              <th scope="col">{t('models.name')}</th>
              <th scope="col">{t('models.labels')}</th>
              <th scope="col">{t('models.size')}</th>
              <th scope="col">{t('install.attribution')}</th>
              <th scope="col">SHA-256</th>
            </tr>
          </thead>
          <tbody>
            {list.map((m) => (
              <tr key={m.id}>
                <th scope="row">
                  {m.name} {m.version ? <span className="small">{m.version}</span> : null}{' '}
                  {m.isDefault ? <span className="badge">{t('models.default')}</span> : null}
                </th>
                <td>{m.labelCount}</td>
                <td>{m.builtin ? t('models.builtin') : fmt.bytes(m.modelBytes)}</td>
                <td className="small">{m.attribution ?? '—'}</td>
                <td className="small">{m.sha256 ? <code title={m.sha256}>{m.sha256.slice(0, 12)}…</code> : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

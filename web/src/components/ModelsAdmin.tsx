/**
 * Hub admins: classifier models (upload, default, enable, delete) and each model's label mapping
 * into the species table, where a mislabelled output is corrected (docs/model.md).
 */
import { useState, type FormEvent } from 'react';
import { useAdminModels, useModelLabels, useModelMutations, useRemapLabel, type ModelInfo, type ModelLabel } from '../api/hooks/models';
import { useT } from '../i18n';
import { useFormat } from '../session';
import { ErrorText, Field } from './ui';
import { LIMITS } from '../limits';

const LABELS_PAGE = 50;

export function ModelsAdmin() {
  const t = useT();
  const fmt = useFormat();
  const models = useAdminModels();
  const { setDefault, toggle: enable, remove, add } = useModelMutations();
  const [open, setOpen] = useState<string | null>(null);

  const onUpload = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    add.mutate(new FormData(e.currentTarget), { onSuccess: () => (e.target as HTMLFormElement).reset() });
  };

  return (
    <>
      <ErrorText error={models.error} />
      <div className="table-wrap">
        <table aria-label={t('models.title')}>
          <thead>
            <tr>
              <th scope="col">{t('models.name')}</th>
              <th scope="col">{t('models.labels')}</th>
              <th scope="col">{t('models.input')}</th>
              <th scope="col">{t('models.size')}</th>
              <th scope="col" />
            </tr>
          </thead>
          <tbody>
            {models.data?.models.map((m) => (
              <tr key={m.id}>
                <th scope="row">
                  {m.name} {m.version ? <span className="small">{m.version}</span> : null}{' '}
                  {m.isDefault ? <span className="badge">{t('models.default')}</span> : null}
                  {!m.enabled ? <span className="badge">{t('models.disabled')}</span> : null}
                  {m.kind === 'range' ? (
                    <span className="badge" data-testid="model-kind-range">
                      {t('models.kind.range')}
                    </span>
                  ) : null}
                </th>
                <td>
                  {m.labelCount}
                  {m.unknownLabelCount > 0 ? <span className="small"> ({t('models.unknown', { n: m.unknownLabelCount })})</span> : null}
                </td>
                {m.kind === 'range' ? (
                  <td>{t('models.rangeInput')}</td>
                ) : (
                  <td>
                    {t('models.family', { seconds: fmt.number(m.windowSeconds, 3), khz: fmt.number(m.sampleRate / 1000, 3) })}
                    {m.family === 'custom' ? <span className="small"> ({t('models.familyCustom')})</span> : null}
                    {m.embeddingOutput ? <div className="small">{t('models.embedding', { size: m.embeddingSize })}</div> : null}
                  </td>
                )}
                <td>{m.builtin ? t('models.builtin') : fmt.bytes(m.modelBytes)}</td>
                <td>
                  <div className="row tight">
                    <button
                      type="button"
                      className="secondary"
                      aria-expanded={open === m.id}
                      onClick={() => setOpen(open === m.id ? null : m.id)}
                    >
                      {t('models.showLabels')}
                    </button>
                    {!m.isDefault && m.enabled && m.kind !== 'range' ? (
                      <button type="button" className="secondary" onClick={() => setDefault.mutate(m.id)}>
                        {t('models.makeDefault')}
                      </button>
                    ) : null}
                    {!m.isDefault ? (
                      <button type="button" className="secondary" onClick={() => enable.mutate(m)}>
                        {m.enabled ? t('models.disable') : t('models.enable')}
                      </button>
                    ) : null}
                    {!m.isDefault && !m.builtin ? (
                      <button
                        type="button"
                        className="secondary"
                        onClick={() => window.confirm(t('models.confirmDelete', { name: m.name })) && remove.mutate(m.id)}
                      >
                        {t('common.delete')}
                      </button>
                    ) : null}
                  </div>
                  {setDefault.error && setDefault.variables === m.id ? <ErrorText error={setDefault.error} /> : null}
                  {enable.error && enable.variables?.id === m.id ? <ErrorText error={enable.error} /> : null}
                  {remove.error && remove.variables === m.id ? <ErrorText error={remove.error} /> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {open ? <LabelMapping model={models.data?.models.find((m) => m.id === open)} /> : null}

      <form className="card" onSubmit={onUpload} aria-label={t('models.upload')}>
        <h3>{t('models.upload')}</h3>
        <Field label={t('models.name')}>{(id) => <input id={id} name="name" required maxLength={LIMITS.modelName.maxLength} />}</Field>
        <Field label={t('models.version')}>{(id) => <input id={id} name="version" maxLength={LIMITS.modelVersion.maxLength} />}</Field>
        <Field label={t('models.kind')} hint={t('models.kindHint')}>
          {(id) => (
            <select id={id} name="kind" defaultValue="classifier">
              <option value="classifier">{t('models.kind.classifier')}</option>
              <option value="range">{t('models.kind.range')}</option>
            </select>
          )}
        </Field>
        <Field label={t('models.onnx')}>{(id) => <input id={id} name="model" type="file" accept=".onnx" required />}</Field>
        <Field label={t('models.labelsFile')} hint={t('models.labelsHint')}>
          {(id) => <input id={id} name="labels" type="file" accept=".txt,text/plain" required />}
        </Field>
        <div className="row">
          <Field label={t('models.sampleRate')} hint={t('models.inputHint')}>
            {(id) => <input id={id} name="sampleRate" type="number" min={1000} max={384000} step={1} />}
          </Field>
          <Field label={t('models.windowSeconds')}>
            {(id) => <input id={id} name="windowSeconds" type="number" min={0.1} max={30} step={0.001} />}
          </Field>
        </div>
        <button type="submit" disabled={add.isPending}>
          {t('models.uploadButton')}
        </button>
        <ErrorText error={add.error} />
        {add.data ? <p role="status">{t('models.uploaded', { name: add.data.name, n: add.data.unknownLabelCount })}</p> : null}
      </form>
    </>
  );
}

/** One model's outputs and their species; each row corrects its own mapping. */
function LabelMapping({ model }: { model: ModelInfo | undefined }) {
  const t = useT();
  const [search, setSearch] = useState('');
  const [own, setOwn] = useState(false);
  const [offset, setOffset] = useState(0);
  const id = model?.id ?? '';
  const labels = useModelLabels(id, { search, own, limit: LABELS_PAGE, offset }, !!model);
  if (!model) return null;
  const total = labels.data?.total ?? 0;
  return (
    <section className="card" aria-label={t('models.mappingOf', { name: model.name })}>
      <h3>{t('models.mappingOf', { name: model.name })}</h3>
      <p className="small">{t('models.mappingHint')}</p>
      <div className="row">
        <Field label={t('models.searchLabels')}>
          {(fid) => <input id={fid} type="search" value={search} onChange={(e) => (setSearch(e.target.value), setOffset(0))} />}
        </Field>
        <label className="row tight">
          <input type="checkbox" checked={own} onChange={(e) => (setOwn(e.target.checked), setOffset(0))} /> {t('models.ownOnly')}
        </label>
      </div>
      <ErrorText error={labels.error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">{t('models.label')}</th>
              <th scope="col">{t('models.species')}</th>
              <th scope="col">{t('models.mapTo')}</th>
            </tr>
          </thead>
          <tbody>
            {labels.data?.labels.map((l) => (
              <LabelRow key={l.index} modelId={model.id} label={l} />
            ))}
          </tbody>
        </table>
      </div>
      <div className="row">
        <span className="small">
          {t('models.labelRange', { from: total ? offset + 1 : 0, to: Math.min(offset + LABELS_PAGE, total), total })}
        </span>
        <button type="button" className="secondary" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - LABELS_PAGE))}>
          {t('models.previous')}
        </button>
        <button
          type="button"
          className="secondary"
          disabled={offset + LABELS_PAGE >= total}
          onClick={() => setOffset(offset + LABELS_PAGE)}
        >
          {t('models.next')}
        </button>
      </div>
    </section>
  );
}

function LabelRow({ modelId, label }: { modelId: string; label: ModelLabel }) {
  const t = useT();
  const [code, setCode] = useState('');
  const remap = useRemapLabel(modelId, label.index, () => setCode(''));
  return (
    <tr>
      <td>{label.index}</td>
      <td className="small">{label.label}</td>
      <td>
        {label.commonName} <span className="small">({label.speciesCode})</span>{' '}
        {label.own ? <span className="badge">{t('models.own')}</span> : null}
      </td>
      <td>
        <form className="row tight" onSubmit={(e) => (e.preventDefault(), remap.mutate(code.trim()))}>
          <input
            aria-label={t('models.mapToFor', { label: label.label })}
            value={code}
            onChange={(e) => setCode(e.target.value)}
            placeholder={t('models.codePlaceholder')}
            size={10}
          />
          <button type="submit" className="secondary" disabled={!code.trim() || remap.isPending}>
            {t('common.save')}
          </button>
        </form>
        <ErrorText error={remap.error} />
      </td>
    </tr>
  );
}

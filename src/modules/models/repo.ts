import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';

/** A classifier model as stored (table `inference_models`, migration 0009). */
export const ModelRow = shape({
  id: col.text(),
  name: col.text(),
  version: col.nullable(col.text()),
  description: col.nullable(col.text()),
  enabled: col.bool(),
  isDefault: col.bool(),
  modelKey: col.nullable(col.text()),
  labelsKey: col.nullable(col.text()),
  modelBytes: col.num(),
  modelSha256: col.nullable(col.text()),
  labelCount: col.int(),
  unknownLabels: col.json<string[]>(),
  uploadedBy: col.nullable(col.text()),
  createdAt: col.date(),
  updatedAt: col.date(),
  /** Moves with every change to the label mapping (model_labels). */
  labelsVersion: col.int(),
  /** What the model listens to (migration 0026, src/infra/classifier/family.ts). */
  family: col.oneOf(['3s-48k', '5s-32k', 'custom'] as const),
  sampleRate: col.int(),
  windowMs: col.int(),
  inputSamples: col.int(),
  embeddingOutput: col.nullable(col.text()),
  embeddingSize: col.int(),
  /** The known model (known-models.ts) it is, if any: decides the attribution shown with its detections. */
  knownFamily: col.nullable(col.text()),
  /** The attribution given at upload or install; the known family's applies when null. */
  attribution: col.nullable(col.text()),
  /** Where an installed file came from (an http(s) URL), null for uploads. */
  sourceUrl: col.nullable(col.text()),
  /** `classifier` (hears audio) or `range` (a species-range model: position and week → one score per label; migration 0033). */
  kind: col.oneOf(['classifier', 'range'] as const),
});
export type ModelRow = RowOf<typeof ModelRow>;

const Id = shape({ id: col.text() });
const Credit = shape({ knownFamily: col.nullable(col.text()), attribution: col.nullable(col.text()) });

const ROW = `id, name, version, description, enabled, is_default AS "isDefault", model_key AS "modelKey", labels_key AS "labelsKey",
  model_bytes::float8 AS "modelBytes", model_sha256 AS "modelSha256", label_count AS "labelCount", unknown_labels AS "unknownLabels",
  uploaded_by AS "uploadedBy", created_at AS "createdAt", updated_at AS "updatedAt", labels_version AS "labelsVersion",
  family, sample_rate AS "sampleRate", window_ms AS "windowMs", input_samples AS "inputSamples",
  embedding_output AS "embeddingOutput", embedding_size AS "embeddingSize",
  known_family AS "knownFamily", attribution, source_url AS "sourceUrl", kind`;

export function createModelsRepo(db: Db) {
  return {
    list: () => db.query(ModelRow, `SELECT ${ROW} FROM inference_models ORDER BY is_default DESC, created_at, id`),

    find: (id: string, tx: Db = db) => tx.maybeOne(ModelRow, `SELECT ${ROW} FROM inference_models WHERE id = $1`, [id]),

    /**
     * The model a team's jobs run: the team's pick while it exists and is enabled, else the hub
     * default (one query per job).
     */
    resolve: (picked: string | null) =>
      db.maybeOne(
        ModelRow,
        `SELECT ${ROW} FROM inference_models WHERE kind = 'classifier' AND ((id = $1 AND enabled) OR is_default) ORDER BY (id = $1 AND enabled) DESC LIMIT 1`,
        [picked ?? ''],
      ),

    insert: (tx: Db, m: Omit<ModelRow, 'isDefault' | 'enabled' | 'updatedAt' | 'labelsVersion'>) =>
      tx.run(
        `INSERT INTO inference_models (id, name, version, description, enabled, is_default, model_key, labels_key, model_bytes, model_sha256, label_count, unknown_labels, uploaded_by, created_at, updated_at,
           family, sample_rate, window_ms, input_samples, embedding_output, embedding_size, known_family, attribution, source_url, kind)
         VALUES ($1, $2, $3, $4, true, false, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`,
        [m.id, m.name, m.version, m.description, m.modelKey, m.labelsKey, m.modelBytes, m.modelSha256, m.labelCount, JSON.stringify(m.unknownLabels), m.uploadedBy, m.createdAt,
          m.family, m.sampleRate, m.windowMs, m.inputSamples, m.embeddingOutput, m.embeddingSize, m.knownFamily, m.attribution, m.sourceUrl, m.kind],
      ),

    /** A label was remapped: the row's edit time and its mapping version move. */
    labelsChanged: (tx: Db, id: string, at: Date) => tx.run('UPDATE inference_models SET labels_version = labels_version + 1, updated_at = $2 WHERE id = $1', [id, at]),

    update: (tx: Db, id: string, patch: { name?: string; description?: string | null; enabled?: boolean; version?: string | null }, at: Date) =>
      tx.run(
        `UPDATE inference_models SET
           name = CASE WHEN $2 THEN $3 ELSE name END,
           description = CASE WHEN $4 THEN $5 ELSE description END,
           enabled = CASE WHEN $6 THEN $7::boolean ELSE enabled END,
           version = CASE WHEN $8 THEN $9 ELSE version END,
           updated_at = $10
         WHERE id = $1`,
        [id, patch.name !== undefined, patch.name ?? null, patch.description !== undefined, patch.description ?? null,
          patch.enabled !== undefined, patch.enabled ?? null, patch.version !== undefined, patch.version ?? null, at],
      ),

    /** Moves the default flag (one statement per row; the partial unique index allows one default). */
    async setDefault(tx: Db, id: string, at: Date): Promise<string | null> {
      const before = await tx.maybeOne(Id, 'SELECT id FROM inference_models WHERE is_default FOR UPDATE');
      if (before?.id === id) return id;
      await tx.run('UPDATE inference_models SET is_default = false, updated_at = $1 WHERE is_default', [at]);
      await tx.run('UPDATE inference_models SET is_default = true, updated_at = $2 WHERE id = $1', [id, at]);
      return before?.id ?? null;
    },

    /** The range model the hub judges with: the newest enabled one (null: none installed). */
    activeRange: () =>
      db.maybeOne(ModelRow, `SELECT ${ROW} FROM inference_models WHERE kind = 'range' AND enabled ORDER BY created_at DESC, id DESC LIMIT 1`),

    remove: (tx: Db, id: string) => tx.run('DELETE FROM inference_models WHERE id = $1', [id]),

    /** What a detection of the model credits (detection detail): the model's own attribution and its family. */
    credit: (id: string) =>
      db.maybeOne(Credit, 'SELECT known_family AS "knownFamily", attribution FROM inference_models WHERE id = $1', [id]),

  };
}

export type ModelsRepo = ReturnType<typeof createModelsRepo>;

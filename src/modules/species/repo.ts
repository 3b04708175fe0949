/**
 * The species table (migration 0013) and each model's labels mapped into it.
 */
import { col, containsPattern, Count, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import { CATEGORIES } from '../settings/registry.ts';
import type { LabelSpecies } from './label-species.ts';
import type { SpeciesCategory } from './catalog.ts';

const SOURCES = ['catalog', 'model'] as const;

export const SpeciesRow = shape({
  code: col.text(),
  scientificName: col.text(),
  commonName: col.text(),
  category: col.oneOf(CATEGORIES),
  source: col.oneOf(SOURCES),
});
export type SpeciesRow = RowOf<typeof SpeciesRow>;

/** One species of the bundled catalog, in catalog order. */
export interface CatalogEntry {
  code: string;
  scientificName: string;
  commonName: string;
  category: SpeciesCategory;
}

/** One label of a model, in output order, with the species it maps into. */
export interface MappedLabel {
  label: string;
  species: LabelSpecies;
}

const ROW = `code, scientific_name AS "scientificName", common_name AS "commonName", category, source`;

/** One output of a model and the species it maps into. */
export const LabelRow = shape({
  index: col.int(),
  label: col.text(),
  speciesCode: col.text(),
  scientificName: col.text(),
  commonName: col.text(),
  category: col.oneOf(CATEGORIES),
  source: col.oneOf(SOURCES),
});
export type LabelRow = RowOf<typeof LabelRow>;

const Fingerprint = shape({ fingerprint: col.text() });

const LABEL_ROW = `l.output_index AS index, l.label, s.code AS "speciesCode", s.scientific_name AS "scientificName", s.common_name AS "commonName", s.category, s.source`;

export function createSpeciesRepo(db: Db) {
  return {
    find: (code: string) => db.maybeOne(SpeciesRow, `SELECT ${ROW} FROM species WHERE lower(code) = lower($1)`, [code]),

    /**
     * Writes the catalog when its fingerprint differs from the one last written, in one
     * transaction under a lock (hubs starting together write it once). Returns the rows written.
     */
    async writeCatalog(entries: readonly CatalogEntry[], fingerprint: string, at: Date): Promise<number> {
      return db.tx(async (tx) => {
        if (tx.kind === 'postgres') await tx.run('SELECT pg_advisory_xact_lock(hashtext($1))', ['species-catalog']);
        const current = await tx.maybeOne(Fingerprint, 'SELECT fingerprint FROM species_catalog_version');
        if (current?.fingerprint === fingerprint) return 0;
        // A species a model brought first becomes the catalog's; rows the file no longer holds stay
        // (models' labels may map into them) without a catalog position.
        await tx.run(`UPDATE species SET catalog_index = NULL WHERE catalog_index IS NOT NULL`);
        const written = await tx.run(
          `INSERT INTO species (code, scientific_name, common_name, category, source, catalog_index, updated_at)
           SELECT e.code, e.sci, e.common, e.category, 'catalog', e.i - 1, $5
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS e(code, sci, common, category, i)
           ON CONFLICT (code) DO UPDATE SET scientific_name = excluded.scientific_name, common_name = excluded.common_name,
             category = excluded.category, source = 'catalog', catalog_index = excluded.catalog_index, updated_at = excluded.updated_at`,
          [
            entries.map((e) => e.code),
            entries.map((e) => e.scientificName),
            entries.map((e) => e.commonName),
            entries.map((e) => e.category),
            at,
          ],
        );
        await tx.run(
          `INSERT INTO species_catalog_version (singleton, fingerprint, species_count, written_at) VALUES (true, $1, $2, $3)
           ON CONFLICT (singleton) DO UPDATE SET fingerprint = excluded.fingerprint, species_count = excluded.species_count, written_at = excluded.written_at`,
          [fingerprint, entries.length, at],
        );
        return written;
      });
    },

    /** A model's labels in output order, with their species; empty when the model is not mapped yet. */
    labelsOf: (modelId: string) =>
      db.query(
        LabelRow,
        `SELECT ${LABEL_ROW} FROM model_labels l JOIN species s ON s.code = l.species_code WHERE l.model_id = $1 ORDER BY l.output_index`,
        [modelId],
      ),

    /** A page of a model's mapped labels: `search` in the label, code or names; `own` only its own species. */
    async labelsPage(modelId: string, q: { search?: string; own?: boolean; limit: number; offset: number }) {
      const params: unknown[] = [modelId];
      const where = ['l.model_id = $1'];
      if (q.search) {
        params.push(containsPattern(q.search));
        where.push(
          `(l.label ILIKE $${params.length} OR s.code ILIKE $${params.length} OR s.common_name ILIKE $${params.length} OR s.scientific_name ILIKE $${params.length})`,
        );
      }
      if (q.own) where.push(`s.source = 'model'`);
      const from = `FROM model_labels l JOIN species s ON s.code = l.species_code WHERE ${where.join(' AND ')}`;
      const [rows, total] = await Promise.all([
        db.query(LabelRow, `SELECT ${LABEL_ROW} ${from} ORDER BY l.output_index LIMIT ${q.limit} OFFSET ${q.offset}`, params),
        db.one(Count, `SELECT count(*)::int AS n ${from}`, params),
      ]);
      return { rows, total: total.n };
    },

    mappedCount: async (modelId: string) =>
      (await db.one(Count, 'SELECT count(*)::int AS n FROM model_labels WHERE model_id = $1', [modelId])).n,

    label: (tx: Db, modelId: string, index: number) =>
      tx.maybeOne(
        LabelRow,
        `SELECT ${LABEL_ROW} FROM model_labels l JOIN species s ON s.code = l.species_code WHERE l.model_id = $1 AND l.output_index = $2`,
        [modelId, index],
      ),

    setLabelSpecies: (tx: Db, modelId: string, index: number, code: string) =>
      tx.run('UPDATE model_labels SET species_code = $3 WHERE model_id = $1 AND output_index = $2', [modelId, index, code]),

    /**
     * Maps a model's labels (all of them, in output order): species the catalog does not know are
     * added as the model's own. A model mapped already keeps its mapping (first writer wins).
     */
    async mapLabels(tx: Db, modelId: string, labels: readonly MappedLabel[], at: Date): Promise<void> {
      const own = labels.filter((l) => !l.species.known);
      if (own.length > 0) {
        await tx.run(
          `INSERT INTO species (code, scientific_name, common_name, category, source, updated_at)
           SELECT DISTINCT ON (e.code) e.code, e.sci, e.common, e.category, 'model', $5
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS e(code, sci, common, category)
           ON CONFLICT (code) DO NOTHING`,
          [
            own.map((l) => l.species.speciesCode),
            own.map((l) => l.species.scientificName),
            own.map((l) => l.species.commonName),
            own.map((l) => l.species.category),
            at,
          ],
        );
      }
      await tx.run(
        `INSERT INTO model_labels (model_id, output_index, label, species_code)
         SELECT $1, e.i - 1, e.label, e.code FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS e(label, code, i)
         ON CONFLICT (model_id, output_index) DO NOTHING`,
        [modelId, labels.map((l) => l.label), labels.map((l) => l.species.speciesCode)],
      );
    },
  };
}

export type SpeciesRepo = ReturnType<typeof createSpeciesRepo>;

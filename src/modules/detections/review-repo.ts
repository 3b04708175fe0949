import { col, shape, type Db, type RowOf } from '../../infra/db/index.ts';
import { VERIFICATION_STATUSES } from './list-sql.ts';

export const VOTE_VALUES = ['confirm', 'reject', 'unsure'] as const;
export type Vote = (typeof VOTE_VALUES)[number];
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];
export type VoteCounts = Record<Vote, number>;

const COMMENT = `c.id, c.detection_id AS "detectionId", c.author_id AS "authorId", u.name AS "authorName", c.text, c.created_at AS "createdAt"`;
export const CommentRow = shape({
  id: col.text(),
  detectionId: col.text(),
  authorId: col.nullable(col.text()),
  authorName: col.nullable(col.text()),
  text: col.text(),
  createdAt: col.date(),
});
export type CommentRow = RowOf<typeof CommentRow>;

const ANNOTATION = `a.id, a.detection_id AS "detectionId", a.author_id AS "authorId", u.name AS "authorName", a.vote,
  a.time_start_ms AS "timeStartMs", a.time_end_ms AS "timeEndMs", a.freq_low_hz AS "freqLowHz", a.freq_high_hz AS "freqHighHz",
  a.notes, a.created_at AS "createdAt"`;
export const AnnotationRow = shape({
  id: col.text(),
  detectionId: col.text(),
  authorId: col.nullable(col.text()),
  authorName: col.nullable(col.text()),
  vote: col.oneOf(VOTE_VALUES),
  timeStartMs: col.int(),
  timeEndMs: col.int(),
  freqLowHz: col.nullable(col.num()),
  freqHighHz: col.nullable(col.num()),
  notes: col.nullable(col.text()),
  createdAt: col.date(),
});
export type AnnotationRow = RowOf<typeof AnnotationRow>;

const LockedDetection = shape({
  id: col.text(),
  speciesCode: col.text(),
  verificationStatus: col.oneOf(VERIFICATION_STATUSES),
  pinnedAt: col.nullable(col.date()),
});
const Found = shape({ found: col.int() });
const VoteRow = shape({ vote: col.oneOf(VOTE_VALUES), decisive: col.bool() });
const UserVote = shape({ detectionId: col.text(), vote: col.oneOf(VOTE_VALUES) });
const ReviewCounts = shape({
  confirm: col.int(),
  reject: col.int(),
  unsure: col.int(),
  mine: col.nullable(col.oneOf(VOTE_VALUES)),
  annotations: col.int(),
  comments: col.int(),
});
const SpeciesSummaryRow = shape({
  speciesCode: col.text(),
  commonName: col.text(),
  scientificName: col.text(),
  count: col.int(),
  maxConfidence: col.num(),
  firstAt: col.date(),
  lastAt: col.date(),
});
const TentativeCounts = shape({ detections: col.int(), species: col.int() });
const TimelineRow = shape({
  speciesCode: col.text(),
  commonName: col.text(),
  scientificName: col.text(),
  bucket: col.date(),
  tentative: col.bool(),
  count: col.int(),
  maxConfidence: col.num(),
});

export const BUCKET_UNITS = ['hour', 'day', 'week'] as const;
export type BucketUnit = (typeof BUCKET_UNITS)[number];

export function createReviewRepo(db: Db) {
  return {
    /** Locks the detection row, so concurrent votes recompute its status one after the other. */
    lockDetection: (tx: Db, tenantId: string, id: string) =>
      tx.maybeOne(
        LockedDetection,
        `SELECT id, species_code AS "speciesCode", verification_status AS "verificationStatus", pinned_at AS "pinnedAt" FROM detections
         WHERE tenant_id = $1 AND id = $2 FOR UPDATE`,
        [tenantId, id],
      ),

    exists: async (tenantId: string, id: string) =>
      (await db.maybeOne(Found, 'SELECT 1 AS found FROM detections WHERE tenant_id = $1 AND id = $2', [tenantId, id])) !== null,

    upsertVote: (tx: Db, v: { detectionId: string; userId: string; tenantId: string; vote: Vote; decisive: boolean; at: Date }) =>
      tx.run(
        `INSERT INTO detection_votes (detection_id, user_id, tenant_id, vote, decisive, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6)
         ON CONFLICT (detection_id, user_id) DO UPDATE SET vote = EXCLUDED.vote, decisive = EXCLUDED.decisive, updated_at = EXCLUDED.updated_at`,
        [v.detectionId, v.userId, v.tenantId, v.vote, v.decisive, v.at],
      ),

    votesOf: (tx: Db, detectionId: string) =>
      tx.query(VoteRow, 'SELECT vote, decisive FROM detection_votes WHERE detection_id = $1', [detectionId]),

    setStatus: (tx: Db, id: string, status: VerificationStatus) =>
      tx.run('UPDATE detections SET verification_status = $2 WHERE id = $1', [id, status]),

    /** The person's votes among `ids`, limited to detections of `tenantIds` (null: any team). */
    votesByUser: (userId: string, ids: string[], tenantIds: string[] | null) =>
      db.query(
        UserVote,
        `SELECT v.detection_id AS "detectionId", v.vote FROM detection_votes v
         WHERE v.user_id = $1 AND v.detection_id = ANY($2::uuid[]) AND ($3::uuid[] IS NULL OR v.tenant_id = ANY($3::uuid[]))`,
        [userId, ids, tenantIds],
      ),

    /** What the detail shows about review: vote counts, the caller's vote, annotation and comment counts. */
    async reviewSummary(detectionId: string, userId: string | null) {
      const r = await db.one(
        ReviewCounts,
        `SELECT
           (SELECT count(*)::int FROM detection_votes WHERE detection_id = $1 AND vote = 'confirm') AS confirm,
           (SELECT count(*)::int FROM detection_votes WHERE detection_id = $1 AND vote = 'reject') AS reject,
           (SELECT count(*)::int FROM detection_votes WHERE detection_id = $1 AND vote = 'unsure') AS unsure,
           (SELECT vote FROM detection_votes WHERE detection_id = $1 AND user_id = $2::uuid) AS mine,
           (SELECT count(*)::int FROM detection_annotations WHERE detection_id = $1) AS annotations,
           (SELECT count(*)::int FROM detection_comments WHERE detection_id = $1) AS comments`,
        [detectionId, userId],
      );
      const votes: VoteCounts = { confirm: r.confirm, reject: r.reject, unsure: r.unsure };
      return {
        votes,
        myVote: r.mine,
        annotationCount: r.annotations,
        commentCount: r.comments,
      };
    },

    insertComment: (tx: Db, c: { id: string; detectionId: string; tenantId: string; authorId: string; text: string; at: Date }) =>
      tx.run('INSERT INTO detection_comments (id, detection_id, tenant_id, author_id, text, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
        c.id,
        c.detectionId,
        c.tenantId,
        c.authorId,
        c.text,
        c.at,
      ]),

    findComment: (detectionId: string, commentId: string) =>
      db.maybeOne(
        CommentRow,
        `SELECT ${COMMENT} FROM detection_comments c LEFT JOIN users u ON u.id = c.author_id WHERE c.detection_id = $1 AND c.id = $2`,
        [detectionId, commentId],
      ),

    comments: (detectionId: string) =>
      db.query(
        CommentRow,
        `SELECT ${COMMENT} FROM detection_comments c LEFT JOIN users u ON u.id = c.author_id WHERE c.detection_id = $1 ORDER BY c.created_at, c.id`,
        [detectionId],
      ),

    deleteComment: async (tx: Db, detectionId: string, commentId: string) =>
      (await tx.run('DELETE FROM detection_comments WHERE detection_id = $1 AND id = $2', [detectionId, commentId])) > 0,

    insertAnnotation: (tx: Db, a: Omit<AnnotationRow, 'authorName' | 'createdAt'> & { tenantId: string; authorId: string; at: Date }) =>
      tx.run(
        `INSERT INTO detection_annotations (id, detection_id, tenant_id, author_id, vote, time_start_ms, time_end_ms, freq_low_hz, freq_high_hz, notes, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [a.id, a.detectionId, a.tenantId, a.authorId, a.vote, a.timeStartMs, a.timeEndMs, a.freqLowHz, a.freqHighHz, a.notes, a.at],
      ),

    annotations: (detectionId: string) =>
      db.query(
        AnnotationRow,
        `SELECT ${ANNOTATION} FROM detection_annotations a LEFT JOIN users u ON u.id = a.author_id WHERE a.detection_id = $1 ORDER BY a.created_at, a.id`,
        [detectionId],
      ),

    setPin: (tx: Db, id: string, by: string | null, at: Date | null) =>
      tx.run('UPDATE detections SET pinned_at = $2, pinned_by = $3 WHERE id = $1', [id, at, by]),

    /** Promoted calls of the window (a stitched call counts once) in `categories` (those the team shows), one row per species, most detected first. */
    speciesSummary: (tenantId: string, start: Date, end: Date, categories: readonly string[]) =>
      db.query(
        SpeciesSummaryRow,
        `SELECT species_code AS "speciesCode", min(common_name) AS "commonName", min(scientific_name) AS "scientificName",
           count(*)::int AS count, max(confidence) AS "maxConfidence", min(detected_at) AS "firstAt", max(detected_at) AS "lastAt"
         FROM detections WHERE tenant_id = $1 AND detected_at >= $2 AND detected_at < $3 AND promoted AND NOT tentative AND call_id IS NULL
           AND category = ANY($4::text[])
         GROUP BY species_code ORDER BY count(*) DESC, min(common_name), species_code`,
        [tenantId, start, end, [...categories]],
      ),

    tentativeCounts: (tenantId: string, start: Date, end: Date, categories: readonly string[]) =>
      db.one(
        TentativeCounts,
        `SELECT count(*)::int AS detections, count(DISTINCT species_code)::int AS species
         FROM detections WHERE tenant_id = $1 AND detected_at >= $2 AND detected_at < $3 AND tentative AND call_id IS NULL
           AND category = ANY($4::text[])`,
        [tenantId, start, end, [...categories]],
      ),

    /** Every call of the window (a stitched call counts once) in `categories` per (species, UTC bucket, tentative). */
    timeline: (tenantId: string, start: Date, end: Date, unit: BucketUnit, categories: readonly string[]) => {
      // The unit comes from the closed list above, never from the request.
      if (!BUCKET_UNITS.includes(unit)) throw new Error(`bad bucket unit ${unit}`);
      return db.query(
        TimelineRow,
        `SELECT species_code AS "speciesCode", min(common_name) AS "commonName", min(scientific_name) AS "scientificName",
           date_trunc('${unit}', detected_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS bucket, tentative,
           count(*)::int AS count, max(confidence) AS "maxConfidence"
         FROM detections WHERE tenant_id = $1 AND detected_at >= $2 AND detected_at < $3 AND call_id IS NULL AND category = ANY($4::text[])
         GROUP BY species_code, bucket, tentative ORDER BY species_code, bucket`,
        [tenantId, start, end, [...categories]],
      );
    },
  };
}

export type ReviewRepo = ReturnType<typeof createReviewRepo>;

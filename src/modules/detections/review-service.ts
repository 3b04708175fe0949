import type { Db } from '../../infra/db/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { type Actor, roleAtLeast, type TeamActor } from '../../core/actor.ts';
import { newId } from '../../core/crypto.ts';
import { badRequest, forbidden, notFound, validationFailed } from '../../core/errors.ts';
import type { SettingsService } from '../settings/service.ts';
import {
  createReviewRepo,
  type AnnotationRow,
  type CommentRow,
  type VerificationStatus,
  type Vote,
  type VoteCounts,
} from './review-repo.ts';

export const VOTES = ['confirm', 'reject', 'unsure'] as const;
/** The spectrogram an annotation is drawn on: one 3-second chunk at 48 kHz (Nyquist 24 kHz). */
export const CHUNK_MS = 3000;
export const MAX_FREQ_HZ = 24_000;
export const MAX_NOTES = 2000;
export const MAX_COMMENT = 2000;
/** GET /detections/votes answers at most this many ids at once. */
export const MAX_VOTE_IDS = 200;

/**
 * The consensus rule (docs/decisions.md "Detection review"):
 * - no votes: unverified;
 * - decisive votes (cast by a team admin, owner or hub admin) settle it when they agree:
 *   any decisive confirm and no decisive reject → confirmed, and the reverse → rejected;
 * - otherwise confirm votes outnumbering reject votes by at least `quorum` → confirmed,
 *   reject votes outnumbering confirm votes by `quorum` → rejected;
 * - any other voted state (a tie, too thin a lead, only unsure votes) is pending_review.
 */
export function consensus(votes: ReadonlyArray<{ vote: Vote; decisive: boolean }>, quorum: number): VerificationStatus {
  if (votes.length === 0) return 'unverified';
  const decisiveConfirm = votes.some((v) => v.decisive && v.vote === 'confirm');
  const decisiveReject = votes.some((v) => v.decisive && v.vote === 'reject');
  if (decisiveConfirm && !decisiveReject) return 'confirmed';
  if (decisiveReject && !decisiveConfirm) return 'rejected';
  const counts = countVotes(votes);
  const lead = counts.confirm - counts.reject;
  if (lead >= quorum) return 'confirmed';
  if (-lead >= quorum) return 'rejected';
  return 'pending_review';
}

export function countVotes(votes: ReadonlyArray<{ vote: Vote }>): VoteCounts {
  const c: VoteCounts = { confirm: 0, reject: 0, unsure: 0 };
  for (const v of votes) c[v.vote]++;
  return c;
}

export interface AnnotationInput {
  vote: Vote;
  timeStartMs: number;
  timeEndMs: number;
  freqLowHz?: number;
  freqHighHz?: number;
  notes?: string;
}

/** Why an annotation's ranges are refused, one message per problem. */
export function annotationProblems(a: AnnotationInput): string[] {
  const out: string[] = [];
  if (!(a.timeStartMs >= 0 && a.timeStartMs < a.timeEndMs && a.timeEndMs <= CHUNK_MS)) {
    out.push(`time range must satisfy 0 ≤ timeStartMs < timeEndMs ≤ ${CHUNK_MS}`);
  }
  const low = a.freqLowHz;
  const high = a.freqHighHz;
  if (low !== undefined && !(low >= 0 && low < MAX_FREQ_HZ)) out.push(`freqLowHz must be at least 0 and below ${MAX_FREQ_HZ}`);
  if (high !== undefined && !(high > 0 && high <= MAX_FREQ_HZ)) out.push(`freqHighHz must be above 0 and at most ${MAX_FREQ_HZ}`);
  if (low !== undefined && high !== undefined && !(low < high)) out.push('freqLowHz must be below freqHighHz');
  if (a.notes !== undefined && a.notes.length > MAX_NOTES) out.push(`notes must be at most ${MAX_NOTES} characters`);
  return out;
}

const iso = (d: Date) => new Date(d).toISOString();
export const commentView = (c: CommentRow) => ({
  id: c.id,
  detectionId: c.detectionId,
  authorId: c.authorId,
  authorName: c.authorName,
  text: c.text,
  createdAt: iso(c.createdAt),
});
export const annotationView = (a: AnnotationRow) => ({ ...a, createdAt: iso(a.createdAt) });

/** Votes, annotations and comments need a person: a key or the internal key has nobody to count. */
function personOf(actor: Actor): string {
  if (!actor.userId) throw forbidden('Only a signed-in person can do this', 'PERSON_REQUIRED');
  return actor.userId;
}

export function createReviewService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditWriter;
  settings: Pick<SettingsService, 'teamSetting'>;
  /** After the commit, when votes move a detection to confirmed (alert rules that wait for verification). */
  onConfirmed?: (tenantId: string, detectionId: string) => Promise<void>;
  /** After the commit, when votes move a detection into, out of or between confirmed and rejected (species thresholds). */
  onVerifiedChanged?: (tenantId: string, speciesCode: string) => Promise<void>;
}) {
  const { db, clock, audit, settings } = deps;
  const settled = (s: string) => s === 'confirmed' || s === 'rejected';
  const confirmed = async (
    tenantId: string,
    r: { id: string; speciesCode: string; verificationStatus: string; previousStatus: string },
  ) => {
    if (r.verificationStatus !== r.previousStatus && (settled(r.verificationStatus) || settled(r.previousStatus))) {
      await deps.onVerifiedChanged?.(tenantId, r.speciesCode);
    }
    if (r.verificationStatus === 'confirmed' && r.previousStatus !== 'confirmed') await deps.onConfirmed?.(tenantId, r.id);
  };
  const repo = createReviewRepo(db);

  /**
   * Records the person's vote and recomputes the status, in the caller's transaction. The quorum
   * is read before the transaction opens: on PGlite a read outside it would wait for it forever.
   */
  async function castVote(tx: Db, actor: Actor, tenantId: string, detectionId: string, userId: string, vote: Vote, quorum: number) {
    const d = await repo.lockDetection(tx, tenantId, detectionId);
    if (!d) throw notFound('No such detection');
    const decisive = roleAtLeast(actor.teamRole, 'admin');
    await repo.upsertVote(tx, { detectionId, userId, tenantId, vote, decisive, at: clock.now() });
    const votes = await repo.votesOf(tx, detectionId);
    const status = consensus(votes, quorum);
    if (status !== d.verificationStatus) await repo.setStatus(tx, detectionId, status);
    return {
      id: detectionId,
      speciesCode: d.speciesCode,
      verificationStatus: status,
      previousStatus: d.verificationStatus,
      votes: countVotes(votes),
      myVote: vote,
    };
  }

  const quorumOf = (tenantId: string) => settings.teamSetting(tenantId, 'verification_quorum');

  async function mustExist(tenantId: string, id: string) {
    if (!(await repo.exists(tenantId, id))) throw notFound('No such detection');
  }

  return {
    async verify(actor: TeamActor, detectionId: string, vote: Vote) {
      const userId = personOf(actor);
      const tenantId = actor.teamId;
      const quorum = await quorumOf(tenantId);
      const r = await db.tx(async (tx) => {
        const r = await castVote(tx, actor, tenantId, detectionId, userId, vote, quorum);
        await audit.write(tx, actor, {
          action: 'detection.voted',
          targetType: 'detection',
          targetId: detectionId,
          details: { vote, status: r.verificationStatus, previousStatus: r.previousStatus },
        });
        return r;
      });
      await confirmed(tenantId, r);
      const { previousStatus: _, speciesCode: __, ...out } = r;
      return out;
    },

    async annotate(actor: TeamActor, detectionId: string, input: AnnotationInput) {
      const userId = personOf(actor);
      const problems = annotationProblems(input);
      if (problems.length) throw validationFailed(problems.join('; '), { problems });
      const tenantId = actor.teamId;
      const quorum = await quorumOf(tenantId);
      const { out, r } = await db.tx(async (tx) => {
        const r = await castVote(tx, actor, tenantId, detectionId, userId, input.vote, quorum);
        const id = newId();
        const row = {
          id,
          detectionId,
          authorId: userId,
          vote: input.vote,
          timeStartMs: input.timeStartMs,
          timeEndMs: input.timeEndMs,
          freqLowHz: input.freqLowHz ?? null,
          freqHighHz: input.freqHighHz ?? null,
          notes: input.notes ?? null,
        };
        const at = clock.now();
        await repo.insertAnnotation(tx, { ...row, tenantId, at });
        await audit.write(tx, actor, {
          action: 'detection.annotated',
          targetType: 'detection',
          targetId: detectionId,
          details: { annotationId: id, vote: input.vote, status: r.verificationStatus, previousStatus: r.previousStatus },
        });
        const out = {
          annotation: { ...row, authorName: actor.person?.name ?? null, createdAt: iso(at) },
          verificationStatus: r.verificationStatus,
          votes: r.votes,
          myVote: r.myVote,
        };
        return { out, r };
      });
      await confirmed(tenantId, r);
      return out;
    },

    async annotations(tenantId: string, detectionId: string) {
      await mustExist(tenantId, detectionId);
      return { annotations: (await repo.annotations(detectionId)).map(annotationView) };
    },

    /** The caller's votes for the ids, as {detectionId: vote}; ids without a vote are left out. */
    async myVotes(actor: Actor, rawIds: string, tenantIds: string[] | null) {
      const ids = [
        ...new Set(
          rawIds
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        ),
      ];
      if (ids.length === 0) throw badRequest('Name at least one detection id in ids');
      if (ids.length > MAX_VOTE_IDS) throw badRequest(`At most ${MAX_VOTE_IDS} ids at once`);
      const bad = ids.filter((id) => !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id));
      if (bad.length) throw badRequest(`Not a detection id: ${bad.slice(0, 3).join(', ')}`);
      if (!actor.userId) return { votes: {} };
      const rows = await repo.votesByUser(actor.userId, ids, tenantIds);
      const votes: Record<string, Vote> = Object.fromEntries(rows.map((r) => [r.detectionId, r.vote]));
      return { votes };
    },

    async comments(tenantId: string, detectionId: string) {
      await mustExist(tenantId, detectionId);
      return { comments: (await repo.comments(detectionId)).map(commentView) };
    },

    async addComment(actor: TeamActor, detectionId: string, rawText: string) {
      const userId = personOf(actor);
      const text = rawText.trim();
      if (!text) throw badRequest('A comment needs some text');
      if (text.length > MAX_COMMENT) throw badRequest(`A comment has at most ${MAX_COMMENT} characters`);
      const tenantId = actor.teamId;
      await mustExist(tenantId, detectionId);
      const id = newId();
      await db.tx((tx) => repo.insertComment(tx, { id, detectionId, tenantId, authorId: userId, text, at: clock.now() }));
      return commentView((await repo.findComment(detectionId, id))!);
    },

    /** The author deletes their own comment; a team admin or owner (and a hub admin) any comment. */
    async deleteComment(actor: TeamActor, detectionId: string, commentId: string) {
      const tenantId = actor.teamId;
      await mustExist(tenantId, detectionId);
      const c = await repo.findComment(detectionId, commentId);
      if (!c) throw notFound('No such comment');
      const own = actor.userId !== null && c.authorId === actor.userId;
      if (!own && !roleAtLeast(actor.teamRole, 'admin')) throw forbidden('Only the author or a team admin may delete this comment');
      await db.tx(async (tx) => {
        if (!(await repo.deleteComment(tx, detectionId, commentId))) throw notFound('No such comment');
        await audit.write(tx, actor, {
          action: 'detection.comment_deleted',
          targetType: 'detection',
          targetId: detectionId,
          details: { commentId, authorId: c.authorId, own },
        });
      });
      return { deleted: true, id: commentId };
    },

    /** Pins are the team's: pinning twice changes nothing and writes no second entry. */
    async setPinned(actor: TeamActor, detectionId: string, pinned: boolean) {
      const tenantId = actor.teamId;
      return db.tx(async (tx) => {
        const d = await repo.lockDetection(tx, tenantId, detectionId);
        if (!d) throw notFound('No such detection');
        let pinnedAt = d.pinnedAt;
        if (pinned !== (d.pinnedAt !== null)) {
          pinnedAt = pinned ? clock.now() : null;
          await repo.setPin(tx, detectionId, pinned ? actor.userId : null, pinnedAt);
          await audit.write(tx, actor, {
            action: pinned ? 'detection.pinned' : 'detection.unpinned',
            targetType: 'detection',
            targetId: detectionId,
          });
        }
        return { id: detectionId, pinned, pinnedAt: pinnedAt ? iso(pinnedAt) : null };
      });
    },

    /** Review fields of GET /detections/:id. */
    reviewSummary: (detectionId: string, userId: string | null) => repo.reviewSummary(detectionId, userId),
  };
}

export type ReviewService = ReturnType<typeof createReviewService>;

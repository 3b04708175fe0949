/**
 * One broker per hub (issue 21 item 7). Topics carry no hub prefix (the spec fixes their first
 * segment, and satellites build them from their own ids), so two hubs on one broker would both
 * take every chunk and answer the other's satellites with "unknown satellite". Each hub keeps a
 * retained claim on OWNER_TOPIC; a dispatcher that finds another hub's claim at start refuses to
 * start, and a running one that sees a foreign claim arrive says so in its log.
 *
 * The topic has three levels, so no ingest filter (`chorus/+/+/{channel}`) matches it, and no
 * satellite role (`chorus/{tenant}/{satellite}/#`) reaches it.
 */
import crypto from 'node:crypto';
import { TOPIC_ROOT } from '../../protocol/topics.ts';

export const OWNER_TOPIC = `${TOPIC_ROOT}/_hub/owner`;

export interface HubClaim {
  hubId: string;
  /** The process that wrote it: a second dispatcher of the same hub shows as another instance. */
  instance: string;
  publicUrl: string | null;
}

/** The hub id on the broker: derived from CHORUS_SECRET, so stable across restarts and distinct between hubs, and not the secret. */
export function hubIdOf(secret: string): string {
  return crypto.createHmac('sha256', secret).update('chorus mqtt hub id').digest('hex').slice(0, 16);
}

function parseClaim(payload: Buffer): HubClaim | null {
  try {
    const c = JSON.parse(payload.toString('utf8')) as Partial<HubClaim>;
    if (typeof c.hubId !== 'string' || typeof c.instance !== 'string') return null;
    return { hubId: c.hubId, instance: c.instance, publicUrl: typeof c.publicUrl === 'string' ? c.publicUrl : null };
  } catch {
    return null;
  }
}

export type ClaimSeen = { kind: 'none' } | { kind: 'retained'; claim: HubClaim } | { kind: 'foreign'; claim: HubClaim; message: string };

/**
 * What a message on OWNER_TOPIC means to `ours`: the retained claim found at subscription (checked
 * by the caller at start), our own claim, or a live claim by someone else (a mix-up to report).
 */
export function checkClaim(ours: HubClaim, payload: Buffer, retained: boolean): ClaimSeen {
  if (payload.length === 0) return { kind: 'none' }; // a claim cleared by hand
  const claim = parseClaim(payload);
  if (!claim) return { kind: 'none' };
  if (retained) return { kind: 'retained', claim };
  if (claim.instance === ours.instance) return { kind: 'none' };
  if (claim.hubId === ours.hubId)
    return {
      kind: 'foreign',
      claim,
      message: `broker: another dispatcher of this hub (instance ${claim.instance}) connected to the broker; run one dispatcher per hub: both take the same persistent session in turns`,
    };
  return {
    kind: 'foreign',
    claim,
    message: `broker: another Chorus hub (hub id ${claim.hubId}${claim.publicUrl ? ` at ${claim.publicUrl}` : ''}) claimed this broker; one broker per hub: both hubs now take every chunk and answer the other's satellites with "unknown satellite"`,
  };
}

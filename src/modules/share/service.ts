/**
 * Share links of detections (spec §3 "Share link", §4 Detections, 0.64.5, 0.78, 0.79).
 *
 * A link is stateless: `{expiry}.{signature}`, the signature an HMAC-SHA256 over the detection
 * id and the expiry (unix seconds) under a key derived from the hub secret for this purpose only.
 * Nothing is stored, so a link cannot be revoked one by one; it ends by expiring (90 days), by
 * its detection ceasing to be shareable, or by a change of the hub secret (which ends them all).
 *
 * Reading a link checks, in order: the signature (403, so nobody learns whether an id exists
 * or when a forged link would have expired), the expiry (410 SHARE_EXPIRED), then the detection
 * again as it is now: deleted, tentative, not promoted or in a category the team now hides all
 * answer the same 404, so a visitor cannot tell a hidden detection from a deleted one.
 */
import crypto from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import { deriveKey, safeEqual } from '../../core/crypto.ts';
import { conflict, forbidden, gone, notFound } from '../../core/errors.ts';
import { detectionView, type DetectionReaders, type DetectionRow, type DetectionsService } from '../detections/service.ts';
import type { CategoryVisibility } from '../detections/visibility.ts';
import type { AudioService } from '../audio/service.ts';
import type { SpectrogramOptions, SpectrogramService } from '../audio/spectrogram.ts';
import type { SettingsService } from '../settings/service.ts';
import { coarsenTime, type SensitiveSpecies } from '../sensitive/service.ts';
import type { DeviceService } from '../satellites/device-service.ts';
import { previewHtml } from './preview.ts';

export const SHARE_TTL_SECONDS = 90 * 86_400;

const TOKEN = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

export interface ShareDeps {
  detections: Pick<DetectionsService, 'find' | 'teamOfDetection'>;
  visibility: Pick<CategoryVisibility, 'shows'>;
  audio: Pick<AudioService, 'read'>;
  spectrograms: Pick<SpectrogramService, 'ofChunk'>;
  /** The (team, model) calibration; without it calibrated_confidence is the raw confidence. */
  calibrated?: DetectionReaders['calibrated'];
  /** The model's licence credit (issue 31); without it the page credits no one. */
  modelAttribution?: DetectionReaders['modelAttribution'];
  clock: Clock;
  secret: string;
  publicUrl: string;
  /** The hub's name and the team's place name (issue 23); without them the page names "Chorus" and no place. */
  settings?: Pick<SettingsService, 'hubSetting' | 'teamSetting'>;
  sensitive?: Pick<SensitiveSpecies, 'isSensitive'>;
  devices?: Pick<DeviceService, 'positions'>;
}

/** What a shared view says about where: the team's place name, else whole degrees, else nothing. */
export interface SharedPlace {
  name: string | null;
  latitude: number | null;
  longitude: number | null;
}

/**
 * A coordinate rounded to whole degrees (about 111 km north–south): an area a visitor can place
 * on a map of the country, never the garden. Ten times coarser than the sensitive-species grid.
 */
export const toWholeDegree = (v: number | null | undefined): number | null =>
  v === null || v === undefined || !Number.isFinite(v) ? null : Math.round(v) + 0;

export function createShareService(deps: ShareDeps) {
  const { detections, visibility, clock, publicUrl } = deps;
  const key = deriveKey(deps.secret, 'share-link');
  const sign = (id: string, exp: number) => crypto.createHmac('sha256', key).update(`detection:${id}:${exp}`).digest('base64url');

  /** Why a detection may not be shared, or null when it may. */
  async function refusal(r: DetectionRow): Promise<string | null> {
    if (r.tentative || !r.promoted) return 'A tentative detection cannot be shared until the aggregation rule promotes it';
    if (!(await visibility.shows(r.tenantId, r.category))) return `The team hides the ${r.category} category`;
    return null;
  }

  /** The detection a link opens, checked as it is now. */
  async function open(id: string, token: string): Promise<DetectionRow> {
    const m = TOKEN.exec(token);
    if (!m || !safeEqual(m[2], sign(id, Number(m[1])))) throw forbidden('This share link is not valid', 'INVALID_SHARE_LINK');
    if (Number(m[1]) * 1000 <= clock.now().getTime()) throw gone('This share link has expired', 'SHARE_EXPIRED');
    const tenantId = await detections.teamOfDetection(id);
    const r = tenantId ? await detections.find(tenantId, id) : null;
    if (!r || (await refusal(r))) throw notFound('This detection is no longer shared');
    return r;
  }

  const links = (id: string, token: string) => ({
    audioUrl: `${publicUrl}/api/share/audio/${id}/${token}`,
    spectrogramUrl: `${publicUrl}/api/share/spectrogram/${id}/${token}`,
  });

  /** Whether the detection is of a sensitive species (issue 20); without the module, none is. */
  const isSensitive = async (r: DetectionRow) => (await deps.sensitive?.isSensitive(r.tenantId, r.speciesCode)) === true;

  /**
   * Where the detection was heard, generalised (issue 23): the team's `public_place_name` when set,
   * else the satellite's position in whole degrees, else null; always null for a sensitive species,
   * whose place never leaves the team on a link anyone may forward.
   */
  async function placeOf(r: DetectionRow, sensitive: boolean): Promise<SharedPlace | null> {
    if (!deps.settings || sensitive || !deps.sensitive) return null;
    const name = await deps.settings.teamSetting(r.tenantId, 'public_place_name');
    if (name) return { name, latitude: null, longitude: null };
    const [p] = deps.devices ? await deps.devices.positions([r.tenantId], r.satelliteId) : [];
    const latitude = toWholeDegree(p?.profileLatitude ?? p?.fixLatitude);
    const longitude = toWholeDegree(p?.profileLongitude ?? p?.fixLongitude);
    return latitude === null || longitude === null ? null : { name: null, latitude, longitude };
  }

  /**
   * The shared view, built field by field so the team, the satellite and its position can never slip in (0.64.5).
   * A sensitive species (issue 33) is given by the day only (src/modules/sensitive coarsenTime) and without
   * what would pair it with another species' link from the same chunk: its offsets in the chunk, the audio
   * and the spectrogram (the chunk's own sound and picture) are left out, and their routes answer 404.
   */
  async function viewOf(r: DetectionRow, token: string) {
    const sensitive = await isSensitive(r);
    const [[calibrated], hubName, place, modelAttribution] = await Promise.all([
      deps.calibrated ? deps.calibrated([r]) : [r.confidence],
      deps.settings?.hubSetting('hub_name'),
      placeOf(r, sensitive),
      deps.modelAttribution ? deps.modelAttribution(r.modelId) : null,
    ]);
    const v = detectionView(r, calibrated);
    return {
      id: v.id,
      speciesCode: v.speciesCode,
      commonName: v.commonName,
      scientificName: v.scientificName,
      category: v.category,
      detectedAt: sensitive ? coarsenTime(v.detectedAt, 'public').start : v.detectedAt,
      timePrecision: sensitive ? ('day' as const) : ('exact' as const),
      startMs: sensitive ? null : v.startMs,
      endMs: sensitive ? null : v.endMs,
      confidence: v.confidence,
      calibrated_confidence: v.calibrated_confidence,
      verificationStatus: v.verificationStatus,
      isFirstOfSeason: v.isFirstOfSeason,
      isFirstOfDay: v.isFirstOfDay,
      isRare: v.isRare,
      rareReason: v.rareReason,
      ...(sensitive ? { audioUrl: null, spectrogramUrl: null } : links(r.id, token)),
      expiresAt: new Date(Number(token.split('.')[0]) * 1000).toISOString(),
      hubName: hubName || 'Chorus',
      modelAttribution,
      place,
    };
  }

  /** The chunk behind a link, for its audio and spectrogram: never a sensitive species' (the same 404 as an unshared one). */
  async function sharedChunk(id: string, token: string): Promise<DetectionRow> {
    const r = await open(id, token);
    if (await isSensitive(r)) throw notFound('This recording is not shared');
    return r;
  }

  return {
    /** A link token for a detection, valid until `exp` (unix seconds); no checks (tests, fixtures). */
    tokenFor: (id: string, exp = Math.floor(clock.now().getTime() / 1000) + SHARE_TTL_SECONDS) => `${exp}.${sign(id, exp)}`,

    /** GET /detections/:id/share: {shareUrl, expiresAt}; 409 NOT_SHAREABLE when tentative or hidden. */
    async issue(tenantId: string, id: string) {
      const r = await detections.find(tenantId, id);
      if (!r) throw notFound('No such detection');
      const why = await refusal(r);
      if (why) throw conflict(why, 'NOT_SHAREABLE');
      const exp = Math.floor(clock.now().getTime() / 1000) + SHARE_TTL_SECONDS;
      const token = `${exp}.${sign(id, exp)}`;
      return { shareUrl: `${publicUrl}/share/detection/${id}/${token}`, expiresAt: new Date(exp * 1000).toISOString() };
    },

    /** GET /share/detection/:id/:token: the species, time, confidence, badges and media links. */
    async view(id: string, token: string) {
      return viewOf(await open(id, token), token);
    },

    /** GET /share/detection/:id/:token/og: the link preview (Open Graph HTML) of the same view. */
    async preview(id: string, token: string): Promise<string> {
      const v = await viewOf(await open(id, token), token);
      return previewHtml(v, `${publicUrl}/share/detection/${id}/${token}`);
    },

    /** GET /share/audio/:id/:token: the detection's chunk as WAV, with ranges like GET /audio/:chunkId. */
    async audio(id: string, token: string, range: string | undefined) {
      const r = await sharedChunk(id, token);
      return deps.audio.read(r.tenantId, r.chunkId, range);
    },

    /** GET /share/spectrogram/:id/:token: the chunk's spectrogram, as GET /audio/:chunkId/spectrogram.png. */
    async spectrogram(id: string, token: string, opts: SpectrogramOptions) {
      const r = await sharedChunk(id, token);
      return deps.spectrograms.ofChunk(r.tenantId, r.chunkId, opts);
    },
  };
}

export type ShareService = ReturnType<typeof createShareService>;

import { Type } from 'typebox';
import { access, defineRoute } from '../../core/permissions.ts';
import { IdParams, NotJson } from '../../core/schemas.ts';
import { answerAudio } from '../audio/routes.ts';
import { SpectrogramQuery } from '../audio/spectrogram-routes.ts';
import { SPECTROGRAM_LIMITS as L, spectrogramHeaders } from '../audio/spectrogram.ts';
import type { ShareService } from './service.ts';

/**
 * Any text is accepted for both parts: a tampered id or token is a forged link (403), never a
 * validation error that would tell the two apart.
 */
const LinkParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }), token: Type.String({ minLength: 1, maxLength: 200 }) });

/** The response schema also serialises: a field not named here can never reach a visitor. */
const SharedView = Type.Object({
  id: Type.String(),
  speciesCode: Type.String(),
  commonName: Type.String(),
  scientificName: Type.String(),
  category: Type.String(),
  /** For a sensitive species, the start of the UTC day it was heard on (timePrecision `day`). */
  detectedAt: Type.String({ format: 'date-time' }),
  timePrecision: Type.Union([Type.Literal('exact'), Type.Literal('day')]),
  /** The call's place in its chunk; null for a sensitive species. */
  startMs: Type.Union([Type.Integer(), Type.Null()]),
  endMs: Type.Union([Type.Integer(), Type.Null()]),
  confidence: Type.Number(),
  calibrated_confidence: Type.Number(),
  verificationStatus: Type.String(),
  isFirstOfSeason: Type.Boolean(),
  isFirstOfDay: Type.Boolean(),
  isRare: Type.Boolean(),
  rareReason: Type.Union([Type.String(), Type.Null()]),
  /** Null for a sensitive species: its chunk's sound and picture would pair it with other species' links (issue 33). */
  audioUrl: Type.Union([Type.String(), Type.Null()]),
  spectrogramUrl: Type.Union([Type.String(), Type.Null()]),
  expiresAt: Type.String({ format: 'date-time' }),
  /** The hub's name (hub setting hub_name), so the page says whose site it is (issue 23). */
  hubName: Type.String(),
  /** The credit the model's licence asks for ("Powered by BirdNET …", issue 31); null when none. */
  modelAttribution: Type.Union([Type.String(), Type.Null()]),
  /**
   * Where, generalised: the team's public place name, or the satellite's position rounded to whole
   * degrees; null when neither is known or the species is sensitive. Never the exact position.
   */
  place: Type.Union([
    Type.Object({
      name: Type.Union([Type.String(), Type.Null()]),
      latitude: Type.Union([Type.Integer(), Type.Null()]),
      longitude: Type.Union([Type.Integer(), Type.Null()]),
    }),
    Type.Null(),
  ]),
});

export function shareRoutes(share: ShareService) {
  return [
    defineRoute({
      method: 'GET',
      url: '/detections/:id/share',
      action: 'detections.share',
      access: access.role('viewer'),
      team: { resource: 'detection', param: 'id' },
      audit: [],
      summary:
        'A public link to a detection, valid 90 days: {shareUrl, expiresAt}; 409 NOT_SHAREABLE for a tentative detection or a hidden category',
      tags: ['detections', 'share'],
      schema: {
        params: IdParams,
        response: { 200: Type.Object({ shareUrl: Type.String(), expiresAt: Type.String({ format: 'date-time' }) }) },
      },
      handler: ({ actor, params }) => share.issue(actor.teamId, params.id),
    }),

    defineRoute({
      method: 'GET',
      url: '/share/detection/:id/:token',
      action: 'share.detection.read',
      access: access.public,
      audit: [],
      summary:
        'Shared view of a detection: species, time, confidence, badges and the audio link; never the team, the satellite name or its position. 403 forged, 410 SHARE_EXPIRED, 404 no longer shared',
      tags: ['share'],
      schema: { params: LinkParams, response: { 200: SharedView } },
      handler: ({ params }) => share.view(params.id, params.token),
    }),

    defineRoute({
      method: 'GET',
      url: '/share/detection/:id/:token/og',
      action: 'share.detection.preview',
      access: access.public,
      audit: [],
      summary:
        'Link-preview HTML (Open Graph) of a shared detection for sites that unfurl links, every value escaped; same 403, 410 and 404 as the shared view',
      tags: ['share'],
      schema: { params: LinkParams, response: { 200: NotJson('text/html', 'The preview page') } },
      handler: async ({ params, reply }) => {
        const html = await share.preview(params.id, params.token);
        reply.header('content-type', 'text/html; charset=utf-8');
        return html;
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/share/audio/:id/:token',
      action: 'share.audio.read',
      access: access.public,
      audit: [],
      summary:
        "A shared detection's audio as WAV, with HTTP range requests; same 403, 410 and 404 as the shared view, and 404 for a sensitive species",
      tags: ['share'],
      schema: {
        params: LinkParams,
        response: { 200: NotJson('audio/wav', 'The whole WAV'), 206: NotJson('audio/wav', 'The range asked for') },
      },
      handler: async ({ params, req, reply }) => {
        return answerAudio(reply, await share.audio(params.id, params.token, req.headers.range));
      },
    }),

    defineRoute({
      method: 'GET',
      url: '/share/spectrogram/:id/:token',
      action: 'share.spectrogram.read',
      access: access.public,
      audit: [],
      summary:
        "A shared detection's spectrogram PNG, as GET /audio/:chunkId/spectrogram.png; same 403, 410 and 404 as the shared view, and 404 for a sensitive species",
      tags: ['share'],
      schema: { params: LinkParams, querystring: SpectrogramQuery, response: { 200: NotJson('image/png', 'The spectrogram') } },
      handler: async ({ params, query, reply }) => {
        const s = await share.spectrogram(params.id, params.token, {
          width: query.width ?? L.width.default,
          height: query.height ?? L.height.default,
          maxHz: query.maxHz ?? L.maxHz.default,
        });
        reply.headers(spectrogramHeaders(s));
        return s.png;
      },
    }),
  ];
}

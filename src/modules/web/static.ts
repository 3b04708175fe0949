/**
 * The web dashboard (web/, built into web/dist) served at `/`. One declared catch-all GET:
 * a file of the build when the path names one, else index.html so the dashboard's own router
 * handles deep links (/fleet/…, /register?invite=…, /reset-password?token=…). Paths under
 * /api/ never reach the dashboard: an unknown API path keeps the JSON 404.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { access, type Permission } from '../../core/permissions.ts';
import { API_PREFIX } from '../../core/http.ts';
import { errorBody } from '../../core/errors.ts';

export const WEB_DIST = path.resolve(import.meta.dirname, '../../../web/dist');

export const webPermission: Permission = {
  method: 'GET',
  url: '/*',
  action: 'web.dashboard',
  access: access.public,
  audit: [],
  summary: 'The web dashboard: built files, and index.html for every other non-API path',
  tags: ['web'],
};

function fileIn(root: string, urlPath: string): string | null {
  let rel: string;
  try {
    rel = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  const full = path.resolve(root, '.' + path.posix.normalize('/' + rel));
  if (!full.startsWith(root + path.sep)) return null;
  try {
    return fs.statSync(full).isFile() ? path.relative(root, full) : null;
  } catch {
    return null;
  }
}

/**
 * Link unfurlers of chat apps and social sites (they run no JavaScript, so the dashboard's page
 * means nothing to them): they get the public page's Open Graph HTML at /t/:slug instead.
 */
export const LINK_PREVIEW_BOTS =
  /bot|crawler|spider|facebookexternalhit|facebookcatalog|slackbot|slack-imgproxy|twitterbot|discordbot|telegrambot|whatsapp|linkedinbot|skypeuripreview|mastodon|pleroma|misskey|embedly|vkshare|redditbot|applebot|pinterest|synapse|iframely/i;

const PUBLIC_PAGE_PATH = /^\/t\/([A-Za-z0-9_-]{1,100})\/?$/;

export interface WebOptions {
  /** The Open Graph page of a public team page, or null when it is off (the dashboard then answers). */
  botPreview?: (slug: string, lang?: string) => Promise<string | null>;
}

export async function registerWebRoutes(app: FastifyInstance, root = WEB_DIST, opts: WebOptions = {}): Promise<Permission[]> {
  // serve: false — only reply.sendFile; the one route below is the declared way in.
  await app.register(fastifyStatic, { root, serve: false, decorateReply: true });
  app.route({
    method: 'GET',
    url: '/*',
    schema: { hide: true },
    config: { permission: webPermission },
    handler: async (req, reply) => {
      const urlPath = req.url.split('?')[0];
      if (urlPath === API_PREFIX || urlPath.startsWith(API_PREFIX + '/')) return reply.callNotFound();
      const publicPage = PUBLIC_PAGE_PATH.exec(urlPath);
      if (publicPage && opts.botPreview && LINK_PREVIEW_BOTS.test(req.headers['user-agent'] ?? '')) {
        const lang = (req.headers['accept-language'] ?? '').split(/[,;]/)[0]?.trim() || undefined;
        const html = await opts.botPreview(publicPage[1], lang);
        if (html)
          return reply
            .header('content-type', 'text/html; charset=utf-8')
            .header('cache-control', 'public, max-age=600')
            .header('vary', 'User-Agent')
            .send(html);
      }
      const file = urlPath === '/' ? null : fileIn(root, urlPath);
      if (file) {
        // Vite names built assets by content hash: they never change under the same name.
        const immutable = file.startsWith('assets' + path.sep);
        return reply.sendFile(file, { cacheControl: true, immutable, maxAge: immutable ? 365 * 24 * 3600 * 1000 : 0 });
      }
      // A missing build file is a 404, not the page: a stale tab must not get HTML for its script.
      if (urlPath.startsWith('/assets/')) return reply.callNotFound();
      if (!fs.existsSync(path.join(root, 'index.html'))) {
        return reply
          .code(404)
          .send(errorBody('DASHBOARD_NOT_BUILT', 'The web dashboard is not built; run `npm run build:web` (npm start does it)'));
      }
      return reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
    },
  });
  return [webPermission];
}

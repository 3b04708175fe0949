/**
 * Browser defences on every response (docs/security.md), computed by helmet: a
 * Content-Security-Policy the built dashboard passes, nosniff, framing refused, a referrer rule,
 * and HSTS when the public URL is https. Share links carry their token in the URL, so their
 * pages (and the API answers behind them) send no Referer at all.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

type Directives = Record<string, string[]>;

/**
 * The dashboard is one origin: its scripts and styles are built files, spectrograms and audio
 * arrive as blob: URLs, the favicon is a data: URL, the live socket is same-origin.
 */
export const DASHBOARD_CSP: Directives = {
  'default-src': ["'self'"],
  'base-uri': ["'self'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:', 'blob:'],
  'media-src': ["'self'", 'blob:'],
  'font-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
};

/** Swagger UI sets inline styles and data: images; only its own pages get this relaxation. */
const DOCS_CSP: Directives = {
  ...DASHBOARD_CSP,
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:'],
};

const HSTS_SECONDS = 365 * 24 * 3600;

export const isSharePath = (url: string) => /^\/(api\/)?share\//.test(url);

function csp(directives: Directives, https: boolean) {
  return {
    useDefaults: false,
    directives: https ? { ...directives, 'upgrade-insecure-requests': [] } : directives,
  };
}

/**
 * The headers helmet sets for these options. They depend on nothing in the request, so they are
 * worked out once and copied onto each answer: running helmet's middleware per request cost
 * about a tenth of a small answer's time (issue 20).
 */
export function helmetHeaders(options: Readonly<HelmetOptions>): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  const res = {
    setHeader: (name: string, value: unknown) => void (out[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => void delete out[name.toLowerCase()],
  };
  helmet(options)({} as IncomingMessage, res as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err;
  });
  return Object.freeze(out);
}

/** `ws://host:port` of a WebSocket URL, or null when there is none or it is not one. */
function wsOrigin(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'ws:' || u.protocol === 'wss:' ? `${u.protocol}//${u.host}` : null;
  } catch {
    return null;
  }
}

/** Register before the routes; pages under `docsPrefix` (Swagger UI) get their relaxed policy. */
export async function registerSecurityHeaders(
  app: FastifyInstance,
  opts: {
    publicUrl: string;
    docsPrefix: string;
    imgOrigins?: () => Promise<string[]>;
    /** The broker's WebSocket address, which the record page (a phone as satellite) dials: connect-src names its origin. */
    brokerWsUrl?: string | null;
  },
): Promise<void> {
  const https = new URL(opts.publicUrl).protocol === 'https:';
  const brokerOrigin = wsOrigin(opts.brokerWsUrl);
  const dashboardCsp = brokerOrigin ? { ...DASHBOARD_CSP, 'connect-src': [...DASHBOARD_CSP['connect-src'], brokerOrigin] } : DASHBOARD_CSP;
  const common: HelmetOptions = {
    // Only when people reach the hub over https: HSTS on a plain-http hub would lock browsers out of it.
    strictTransportSecurity: https ? { maxAge: HSTS_SECONDS, includeSubDomains: false } : false,
    referrerPolicy: { policy: 'strict-origin-when-cross-origin' },
    frameguard: { action: 'deny' },
  };
  const dashboard = helmetHeaders({ ...common, contentSecurityPolicy: csp(dashboardCsp, https) });
  const docs = helmetHeaders({ ...common, contentSecurityPolicy: csp(DOCS_CSP, https) });
  app.addHook('onRequest', (req, reply, done) => {
    reply.headers(req.url.startsWith(opts.docsPrefix) ? docs : dashboard);
    if (isSharePath(req.url)) reply.header('referrer-policy', 'no-referrer');
    done();
  });
  const imgOrigins = opts.imgOrigins;
  if (imgOrigins) {
    // Image origins an operator configured (the statistics map's tile server): only the dashboard's
    // HTML documents need them, since a document's policy governs what its page loads.
    // A 304 counts too: the browser keeps the cached document but takes the policy of the 304.
    app.addHook('onSend', (_req, reply, payload, done) => {
      const policy = reply.getHeader('content-security-policy');
      const document = String(reply.getHeader('content-type') ?? '').startsWith('text/html') || reply.statusCode === 304;
      if (typeof policy !== 'string' || !document) return done(null, payload);
      imgOrigins()
        .catch(() => [])
        .then((origins) => {
          if (origins.length > 0)
            reply.header(
              'content-security-policy',
              policy.replace(/img-src[^;]*/, (d) => `${d} ${origins.join(' ')}`),
            );
          done(null, payload);
        });
    });
  }
}

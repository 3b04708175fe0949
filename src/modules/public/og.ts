/**
 * The link preview of a public team page: Open Graph and Twitter card tags for chat apps and
 * social sites, which read HTML and run no JavaScript. Every value is escaped; a person who
 * opens it is sent on to the page.
 */
import { escapeHtml } from '../share/preview.ts';
import type { PublicPage } from './schemas.ts';

/** `redirect`: people who open the /og address are sent on to the page; at the page's own address (bots) it would loop. */
export function ogHtml(p: PublicPage, publicUrl: string, redirect = true): string {
  const pageUrl = `${publicUrl}/t/${encodeURIComponent(p.slug)}`;
  // Unfurlers need absolute addresses; the photos module gives the hub's own paths.
  const absolute = (url: string) => (url.startsWith('/') ? publicUrl + url : url);
  const title = p.name;
  const figures = `${p.counts.species} species, ${p.counts.detections} detections, ${p.counts.devices} recorders`;
  const description = p.description ? `${p.description} — ${figures}` : figures;
  const image = p.topSpecies.find((s) => s.photo)?.photo ?? null;
  const prop = (property: string, content: string) => `<meta property="${property}" content="${escapeHtml(content)}">`;
  const name = (n: string, content: string) => `<meta name="${n}" content="${escapeHtml(content)}">`;
  return [
    '<!doctype html>',
    `<html lang="${escapeHtml(p.lang)}"><head><meta charset="utf-8">`,
    `<title>${escapeHtml(title)}</title>`,
    name('description', description),
    prop('og:type', 'website'),
    prop('og:site_name', 'Chorus'),
    prop('og:title', title),
    prop('og:description', description),
    prop('og:url', pageUrl),
    ...(image ? [prop('og:image', absolute(image.url)), prop('og:image:alt', `Photo: ${image.credit} (${image.licence})`)] : []),
    name('twitter:card', image ? 'summary_large_image' : 'summary'),
    name('twitter:title', title),
    name('twitter:description', description),
    ...(image ? [name('twitter:image', absolute(image.url))] : []),
    ...(redirect ? [`<meta http-equiv="refresh" content="0; url=${escapeHtml(pageUrl)}">`] : []),
    `</head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(description)}</p><p><a href="${escapeHtml(pageUrl)}">${escapeHtml(pageUrl)}</a></p></body></html>`,
  ].join('\n');
}

/**
 * The link preview of a share link (spec §3: "page, audio and preview answer 410"): a small HTML
 * page with Open Graph tags for chat apps and social sites that unfurl links, which do not run
 * the dashboard's JavaScript. Every value is escaped; people who open it are sent on to the page.
 */
export interface PreviewFields {
  commonName: string;
  scientificName: string;
  detectedAt: string;
  /** `day` for a sensitive species (issue 33): the preview names the day, and carries no audio or image of the chunk. */
  timePrecision: 'exact' | 'day';
  confidence: number;
  isRare: boolean;
  isFirstOfSeason: boolean;
  audioUrl: string | null;
  spectrogramUrl: string | null;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

export function previewHtml(v: PreviewFields, pageUrl: string): string {
  const title = `${v.commonName} (${v.scientificName})`;
  const badges = [v.isRare ? 'rare' : '', v.isFirstOfSeason ? 'first of season' : ''].filter(Boolean).join(', ');
  const when = v.timePrecision === 'day' ? `on ${v.detectedAt.slice(0, 10)}` : `${v.detectedAt.slice(0, 16).replace('T', ' ')} UTC`;
  const description = `Heard ${when}, confidence ${Math.round(v.confidence * 100)} %${badges ? ` (${badges})` : ''}`;
  const meta = (property: string, content: string) => `<meta property="${property}" content="${escapeHtml(content)}">`;
  return [
    '<!doctype html>',
    '<html><head><meta charset="utf-8">',
    `<title>${escapeHtml(title)}</title>`,
    `<meta name="description" content="${escapeHtml(description)}">`,
    meta('og:type', 'website'),
    meta('og:title', title),
    meta('og:description', description),
    meta('og:url', pageUrl),
    ...(v.spectrogramUrl
      ? [meta('og:image', `${v.spectrogramUrl}?width=1200&height=630`), meta('og:image:width', '1200'), meta('og:image:height', '630')]
      : []),
    ...(v.audioUrl ? [meta('og:audio', v.audioUrl), meta('og:audio:type', 'audio/wav')] : []),
    `<meta http-equiv="refresh" content="0; url=${escapeHtml(pageUrl)}">`,
    `</head><body><p><a href="${escapeHtml(pageUrl)}">${escapeHtml(title)}</a></p></body></html>`,
  ].join('\n');
}

/**
 * Chat bodies, one per platform, each inside that platform's documented limits. Rule, team,
 * satellite and species names are user text: each platform's markup is escaped, and a field is
 * shortened code point by code point after escaping, so a cut never splits an entity or a pair.
 */
import type { AlertEvent, AlertPayload } from './types.ts';
import { formatConfidence, formatWhen, wordsOf } from '../words.ts';

const ELLIPSIS = '…';

/** Escapes `raw` one code point at a time, stopping (with an ellipsis) before the result passes `max`. */
export function fit(raw: string, max: number, escape: (ch: string) => string = (ch) => ch): string {
  let out = '';
  const points = Array.from(raw);
  for (let i = 0; i < points.length; i++) {
    const piece = escape(points[i]);
    const room = i === points.length - 1 ? max : max - ELLIPSIS.length;
    if (out.length + piece.length > room) return out + ELLIPSIS;
    out += piece;
  }
  return out;
}

/** The event's title word in the alert's language (src/modules/alerts/words.ts). */
const label = (p: AlertPayload): string => wordsOf(p.language).label[p.event];
/** When it fired, as people read it in the team's zone; machine fields keep p.timestamp. */
const when = (p: AlertPayload): string => formatWhen(p.timestamp, p);

const COLOUR: Record<AlertEvent, number> = {
  rare_species: 0xd97706,
  first_of_day: 0x2563eb,
  first_of_season: 0x16a34a,
  satellite_offline: 0xdc2626,
  absence: 0x7c3aed,
  trend: 0x0891b2,
  custom_rule: 0x475569,
  test: 0x64748b,
};

const TEAMS_COLOUR: Record<AlertEvent, string> = {
  rare_species: 'Warning',
  first_of_day: 'Accent',
  first_of_season: 'Good',
  satellite_offline: 'Attention',
  absence: 'Accent',
  trend: 'Accent',
  custom_rule: 'Default',
  test: 'Default',
};

/** Only an absolute http(s) link is offered as a button; anything else would be refused by the platform. */
const linkOf = (p: AlertPayload, max: number): string | null =>
  p.link !== null && /^https?:\/\//i.test(p.link) && p.link.length <= max ? p.link : null;

function facts(p: AlertPayload): Array<[string, string]> {
  const k = wordsOf(p.language).fact;
  const rows: Array<[string, string | null]> = [
    [k.species, p.commonName && p.species ? `${p.commonName} (${p.species})` : (p.commonName ?? p.species)],
    [k.confidence, p.confidence === null ? null : formatConfidence(p.confidence, p.language)],
    [k.satellite, p.satelliteName],
    [k.rule, p.ruleName],
    [k.team, p.teamName],
  ];
  return rows.filter((r): r is [string, string] => r[1] !== null && r[1] !== '');
}

const oneLine = (s: string): string => s.replace(/[\r\n\t\u2028\u2029]+/g, ' ');

// --- Slack (Block Kit) -------------------------------------------------------------------------

const slackEscape = (ch: string): string => (ch === '&' ? '&amp;' : ch === '<' ? '&lt;' : ch === '>' ? '&gt;' : ch);

export function slackBody(p: AlertPayload) {
  const text = fit(oneLine(p.message), 3000, slackEscape);
  const fields = facts(p).map(([k, v]) => ({ type: 'mrkdwn', text: `*${k}*\n${fit(oneLine(v), 1900, slackEscape)}` }));
  const blocks: Array<Record<string, unknown>> = [
    { type: 'header', text: { type: 'plain_text', text: fit(`${label(p)}: ${oneLine(p.ruleName)}`, 150), emoji: true } },
    { type: 'section', text: { type: 'mrkdwn', text } },
  ];
  if (fields.length > 0) blocks.push({ type: 'section', fields });
  blocks.push({ type: 'context', elements: [{ type: 'plain_text', text: fit(`${oneLine(p.teamName)} · ${when(p)}`, 2000) }] });
  const link = linkOf(p, 3000);
  if (link)
    blocks.push({
      type: 'actions',
      elements: [{ type: 'button', text: { type: 'plain_text', text: wordsOf(p.language).open }, url: link }],
    });
  return { text, blocks };
}

// --- Discord (webhook embeds) ------------------------------------------------------------------

/** Discord's markdown takes a backslash before any punctuation, so escaping generously is harmless. */
const discordEscape = (ch: string): string => (/[\\*_~|>`<[\]()#-]/.test(ch) ? `\\${ch}` : ch);
// A zero-width space after '@' keeps the words but loses the ping (allowed_mentions is the real guard).
const unmention = (s: string): string => s.replace(/@(everyone|here)/gi, '@\u200b$1');

export function discordBody(p: AlertPayload) {
  const d = (s: string, max: number) => fit(unmention(oneLine(s)), max, discordEscape);
  const title = d(`${label(p)}: ${p.commonName ?? p.ruleName}`, 256);
  const fields = facts(p).map(([name, value]) => ({ name, value: d(value, 256), inline: true }));
  const footer = { text: 'Chorus' };
  const used = title.length + footer.text.length + fields.reduce((n, f) => n + f.name.length + f.value.length, 0);
  const description = d(p.message, Math.min(4096, 6000 - used));
  const link = linkOf(p, 2000);
  const embed = { title, description, color: COLOUR[p.event], fields, timestamp: p.timestamp, footer, ...(link ? { url: link } : {}) };
  return { username: 'Chorus', allowed_mentions: { parse: [] as string[] }, embeds: [embed] };
}

// --- Telegram (Bot API sendMessage, HTML mode) -------------------------------------------------

const htmlEscape = (ch: string): string => (ch === '&' ? '&amp;' : ch === '<' ? '&lt;' : ch === '>' ? '&gt;' : ch === '"' ? '&quot;' : ch);

export function telegramBody(chatId: string, p: AlertPayload) {
  const h = (s: string, max: number) => fit(oneLine(s), max, htmlEscape);
  // Each part is bounded on its own, so the assembled text stays under 4096 without cutting markup.
  const lines = [`<b>${h(`${label(p)}: ${p.ruleName}`, 300)}</b>`, h(p.message, 2000), ''];
  for (const [k, v] of facts(p)) lines.push(`<b>${k}:</b> ${h(v, 150)}`);
  // A link is whole or absent: a shortened URL would lead somewhere else.
  const link = linkOf(p, 700);
  const href = link === null ? '' : Array.from(link, htmlEscape).join('');
  if (link && href.length <= 700) lines.push('', `<a href="${href}">${h(wordsOf(p.language).open, 100)}</a>`);
  return { chat_id: chatId, text: lines.join('\n'), parse_mode: 'HTML' as const, disable_web_page_preview: true };
}

// --- Microsoft Teams (Adaptive Card 1.4) -------------------------------------------------------

export const TEAMS_MAX_BYTES = 28 * 1000;

function teamsMessage(p: AlertPayload, message: string) {
  const link = linkOf(p, 2000);
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            {
              type: 'TextBlock',
              text: fit(`${label(p)}: ${oneLine(p.ruleName)}`, 200),
              size: 'Medium',
              weight: 'Bolder',
              color: TEAMS_COLOUR[p.event],
              wrap: true,
            },
            { type: 'TextBlock', text: message, wrap: true },
            { type: 'FactSet', facts: facts(p).map(([title, value]) => ({ title, value: fit(oneLine(value), 500) })) },
            { type: 'TextBlock', text: when(p), isSubtle: true, size: 'Small', wrap: true },
          ],
          ...(link ? { actions: [{ type: 'Action.OpenUrl', title: wordsOf(p.language).open, url: link }] } : {}),
        },
      },
    ],
  };
}

const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v), 'utf8');

export function teamsBody(p: AlertPayload) {
  const message = oneLine(p.message);
  const full = teamsMessage(p, message);
  if (jsonBytes(full) <= TEAMS_MAX_BYTES) return full;
  // The message gets what the rest of the card leaves, measured in the JSON bytes each character costs.
  let budget = TEAMS_MAX_BYTES - jsonBytes(teamsMessage(p, ''));
  let cut = '';
  for (const ch of message) {
    const cost = jsonBytes(ch) - 2;
    if (budget - cost < jsonBytes(ELLIPSIS)) break;
    budget -= cost;
    cut += ch;
  }
  return teamsMessage(p, cut + ELLIPSIS);
}

// --- Email -------------------------------------------------------------------------------------

export function emailMessage(p: AlertPayload): { subject: string; text: string } {
  // Control characters in a subject are a header-injection risk even where the mailer encodes them.
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  const subject = fit(`[Chorus] ${p.message}`.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim(), 200);
  const w = wordsOf(p.language);
  const lines = [p.message, '', ...facts(p).map(([k, v]) => `${k}: ${v}`), `${w.fact.time}: ${when(p)}`];
  if (p.link) lines.push('', p.link);
  lines.push('', w.emailReason(p.ruleName, p.teamName));
  return { subject, text: lines.join('\n') };
}

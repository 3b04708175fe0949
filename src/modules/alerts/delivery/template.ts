/**
 * Webhook bodies: the protocol's default body, or a team's Mustache template. `{{var}}` is escaped
 * for use inside a JSON string literal (not HTML-escaped, which would corrupt the data), so a
 * detection's text cannot break out of the string it was put in.
 */
import Mustache from 'mustache';
import type { AlertPayload } from './types.ts';

export const TEMPLATE_MAX_BYTES = 8192;

/** Plausible, so a channel test shows a receiver what a real alert looks like. */
export const SAMPLE_PAYLOAD: AlertPayload = Object.freeze({
  event: 'test',
  timestamp: '2025-05-01T05:42:10.000Z',
  ruleName: 'Channel test',
  teamName: 'Chorus',
  message: 'Test alert: Eurasian Wren (0.91) at Garden',
  species: 'Troglodytes troglodytes',
  commonName: 'Eurasian Wren',
  confidence: 0.91,
  satelliteName: 'Garden',
  detectionId: '00000000-0000-4000-8000-000000000000',
  link: null,
});

// Validation renders these: a template only passes when hostile text and absent values both yield JSON.
const HOSTILE = 'Wren "the \\ bold"\n</script><b>&amp;';
const VALIDATION_SAMPLES: AlertPayload[] = [
  {
    ...SAMPLE_PAYLOAD,
    ruleName: HOSTILE,
    teamName: HOSTILE,
    message: `Rare species: ${HOSTILE}`,
    commonName: HOSTILE,
    satelliteName: HOSTILE,
    link: 'https://chorus.example/d/1?a="b"',
  },
  { ...SAMPLE_PAYLOAD, event: 'satellite_offline', species: null, commonName: null, confidence: null, detectionId: null, link: null },
];

const jsonStringEscape = (value: unknown): string => JSON.stringify(String(value)).slice(1, -1);

const dataOf = (p: AlertPayload) => ({
  species: p.species,
  commonName: p.commonName,
  confidence: p.confidence,
  satelliteName: p.satelliteName,
  detectionId: p.detectionId,
});

export function defaultWebhookBody(p: AlertPayload): string {
  return JSON.stringify({ event: p.event, timestamp: p.timestamp, data: dataOf(p) });
}

/** Prototype-free, so `{{constructor}}` and friends find nothing to call. */
function viewOf(p: AlertPayload): Record<string, unknown> {
  const view = Object.assign(Object.create(null) as Record<string, unknown>, p);
  view.data = Object.assign(Object.create(null) as Record<string, unknown>, dataOf(p));
  return view;
}

/** Mustache's token: [kind, name, start, end, inner tokens (sections), …]. */
type Token = [string, string, number, number, Token[]?, ...unknown[]];

/**
 * Unescaped tags (`{{{x}}}`, `{{& x}}`) become escaped ones: every value reaches the body
 * JSON-string-escaped, whatever a template (even one saved before this rule) asks for, so no
 * value can close its string and add keys. The parse cache is shared, so tokens are copied.
 */
function escapedTokens(tokens: Token[]): Token[] {
  return tokens.map((t): Token => {
    if (t[0] === '&') return ['name', t[1], t[2], t[3]];
    if ((t[0] === '#' || t[0] === '^') && Array.isArray(t[4])) return [t[0], t[1], t[2], t[3], escapedTokens(t[4]), ...t.slice(5)];
    return t;
  });
}

function render(template: string, view: Record<string, unknown>): string {
  const tokens = escapedTokens(Mustache.parse(template) as unknown as Token[]);
  // The escape goes in the per-call config: Mustache.escape is global and other code may rely on it.
  return new Mustache.Writer().renderTokens(tokens as never, new Mustache.Context(view), {}, template, { escape: jsonStringEscape });
}

export const renderTemplate = (template: string, p: AlertPayload): string => render(template, viewOf(p));

/** Section names a payload can fill: its fields, `data` and `data.<field>`. Others are always empty. */
const SECTION_FIELDS = new Set([...Object.keys(SAMPLE_PAYLOAD), 'data', ...Object.keys(dataOf(SAMPLE_PAYLOAD)).map((k) => `data.${k}`)]);
const MAX_SECTION_FIELDS = 8;

function sectionNames(tokens: Token[], into = new Set<string>()): Set<string> {
  for (const t of tokens) {
    if (t[0] !== '#' && t[0] !== '^') continue;
    if (SECTION_FIELDS.has(t[1])) into.add(t[1]);
    if (Array.isArray(t[4])) sectionNames(t[4], into);
  }
  return into;
}

/** The view of `p` with each named field set as in `from` (filled) or null (empty). */
function viewWith(p: AlertPayload, from: AlertPayload, filled: string[], empty: string[]): Record<string, unknown> {
  const view = viewOf(p);
  const source = viewOf(from);
  const set = (name: string, value: (v: Record<string, unknown>) => unknown) => {
    const [head, field] = name.split('.');
    if (field === undefined) view[head] = value(source);
    else if (view.data) (view.data as Record<string, unknown>)[field] = (value(source) as Record<string, unknown> | null)?.[field] ?? null;
  };
  for (const name of filled) set(name, (v) => (name.includes('.') ? v.data : v[name]));
  for (const name of empty) set(name, () => null);
  return view;
}

/**
 * An error message for the channel form, or null when the template is fit to save. The template
 * is rendered with hostile text and with absent values, and, for every field a section tests
 * (`{{#species}}`, `{{^species}}`), with that field both filled and empty in every combination:
 * a branch that only renders for a null field is checked too.
 */
export function validateTemplate(template: string): string | null {
  if (Buffer.byteLength(template, 'utf8') > TEMPLATE_MAX_BYTES) return `the template is longer than ${TEMPLATE_MAX_BYTES} bytes`;
  let names: string[];
  try {
    names = [...sectionNames(Mustache.parse(template) as unknown as Token[])];
  } catch (err) {
    return `template syntax: ${(err as Error).message}`;
  }
  if (names.length > MAX_SECTION_FIELDS) return `the template's sections test more than ${MAX_SECTION_FIELDS} different fields`;
  const [hostile] = VALIDATION_SAMPLES;
  for (const sample of VALIDATION_SAMPLES) {
    for (let mask = 0; mask < 2 ** names.length; mask++) {
      const filled = names.filter((_, i) => mask & (2 ** i));
      const empty = names.filter((_, i) => !(mask & (2 ** i)));
      let out: string;
      try {
        out = render(template, viewWith(sample, hostile, filled, empty));
      } catch (err) {
        return `template syntax: ${(err as Error).message}`;
      }
      try {
        JSON.parse(out);
      } catch (err) {
        const when =
          empty.length > 0
            ? ` when ${empty.join(', ')} ${empty.length === 1 ? 'is' : 'are'} empty`
            : sample.confidence === null
              ? ' when fields are empty (as in a satellite_offline alert)'
              : '';
        return `the template does not render valid JSON${when}: ${(err as Error).message}`;
      }
    }
  }
  return null;
}

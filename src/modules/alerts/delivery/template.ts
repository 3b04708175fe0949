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

export function renderTemplate(template: string, p: AlertPayload): string {
  // The escape goes in the per-call config: Mustache.escape is global and other code may rely on it.
  return Mustache.render(template, viewOf(p), {}, { escape: jsonStringEscape });
}

/** An error message for the channel form, or null when the template is fit to save. */
export function validateTemplate(template: string): string | null {
  if (Buffer.byteLength(template, 'utf8') > TEMPLATE_MAX_BYTES) return `the template is longer than ${TEMPLATE_MAX_BYTES} bytes`;
  for (const sample of VALIDATION_SAMPLES) {
    let out: string;
    try {
      out = renderTemplate(template, sample);
    } catch (err) {
      return `template syntax: ${(err as Error).message}`;
    }
    try {
      JSON.parse(out);
    } catch (err) {
      const when = sample.confidence === null ? ' when fields are empty (as in a satellite_offline alert)' : '';
      return `the template does not render valid JSON${when}: ${(err as Error).message}`;
    }
  }
  return null;
}

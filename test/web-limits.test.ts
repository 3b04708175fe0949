/**
 * The dashboard's input limits (web/src/limits.ts) are the API's (issue 23, item 6): every entry
 * names where the hub states it (a body or query field of a route in the OpenAPI document, or
 * the service constant it checks after trimming) and must carry the same numbers.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { LIMITS } from '../web/src/limits.ts';
import { MAX_COMMENT } from '../src/modules/detections/review-service.ts';

type Source = { method: string; path: string; in: 'body' | 'query'; field: string; scale?: number } | { constant: number };

const SOURCES: Record<keyof typeof LIMITS, Source> = {
  personName: { method: 'post', path: '/api/auth/register', in: 'body', field: 'name' },
  email: { method: 'post', path: '/api/auth/register', in: 'body', field: 'email' },
  password: { method: 'post', path: '/api/auth/register', in: 'body', field: 'password' },
  teamName: { method: 'post', path: '/api/auth/create-tenant', in: 'body', field: 'name' },
  teamDescription: { method: 'post', path: '/api/auth/create-tenant', in: 'body', field: 'description' },
  joinMessage: { method: 'post', path: '/api/tenants/{id}/join', in: 'body', field: 'message' },
  apiKeyName: { method: 'post', path: '/api/auth/api-keys', in: 'body', field: 'name' },
  satelliteName: { method: 'patch', path: '/api/satellites/{id}', in: 'body', field: 'name' },
  passkeyName: { method: 'post', path: '/api/auth/mfa/passkeys/register/finish', in: 'body', field: 'name' },
  comment: { constant: MAX_COMMENT },
  annotationNotes: { method: 'post', path: '/api/detections/{id}/annotate', in: 'body', field: 'notes' },
  fieldNote: { method: 'post', path: '/api/field-notes', in: 'body', field: 'text' },
  alertRuleName: { method: 'post', path: '/api/alert-rules/rules', in: 'body', field: 'name' },
  alertChannelName: { method: 'post', path: '/api/alert-rules/channels', in: 'body', field: 'name' },
  scheduledExportName: { method: 'post', path: '/api/exports/scheduled', in: 'body', field: 'name' },
  modelName: { method: 'put', path: '/api/admin/models/{id}', in: 'body', field: 'name' },
  modelVersion: { method: 'put', path: '/api/admin/models/{id}', in: 'body', field: 'version' },
  modelUrl: { method: 'post', path: '/api/admin/models/install', in: 'body', field: 'url' },
  modelAttribution: { method: 'post', path: '/api/admin/models/install', in: 'body', field: 'attribution' },
  confidencePercent: { method: 'get', path: '/api/detections', in: 'query', field: 'minConfidence', scale: 100 },
  cooldownMinutes: { method: 'post', path: '/api/alert-rules/rules', in: 'body', field: 'cooldownMinutes' },
};

type Schema = {
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  $ref?: string;
};

let hub: Hub;
let doc: { paths: Record<string, Record<string, any>>; components?: { schemas?: Record<string, Schema> } };
before(async () => {
  hub = await startHub();
  doc = await (await fetch(`${hub.url}/api/docs/openapi.json`)).json();
});
after(() => hub.close());

const deref = (s: Schema): Schema => (s.$ref ? deref(doc.components!.schemas![s.$ref.split('/').pop()!]) : s);
/** The field's own bounds, looking through a nullable union (`string | null`). */
const bounds = (s: Schema): Schema => {
  const d = deref(s);
  return d.anyOf ? Object.assign({}, ...d.anyOf.map(bounds)) : d;
};

function fieldSchema(src: Extract<Source, { path: string }>): Schema {
  const op = doc.paths[src.path]?.[src.method];
  assert.ok(op, `the API has ${src.method.toUpperCase()} ${src.path}`);
  if (src.in === 'query') {
    const p = (op.parameters as { in: string; name: string; schema: Schema }[]).find((x) => x.in === 'query' && x.name === src.field);
    assert.ok(p, `${src.path} reads ?${src.field}`);
    return bounds(p.schema);
  }
  const body = deref(op.requestBody.content['application/json'].schema);
  const props = body.properties ?? Object.assign({}, ...(body.anyOf ?? []).map((b) => deref(b).properties ?? {}));
  assert.ok(props[src.field], `${src.path} takes ${src.field}`);
  return bounds(props[src.field]);
}

test('every input limit of the dashboard equals the API’s', () => {
  for (const [name, limit] of Object.entries(LIMITS) as [keyof typeof LIMITS, Record<string, number>][]) {
    const src = SOURCES[name];
    if ('constant' in src) {
      assert.equal(limit.maxLength, src.constant, `${name}: maxLength`);
      continue;
    }
    const s = fieldSchema(src);
    const scale = src.scale ?? 1;
    if ('maxLength' in limit) assert.equal(limit.maxLength, s.maxLength, `${name}: maxLength of ${src.path} ${src.field}`);
    if ('min' in limit) assert.equal(limit.min, (s.minimum ?? NaN) * scale, `${name}: minimum of ${src.path} ${src.field}`);
    if ('max' in limit) assert.equal(limit.max, (s.maximum ?? NaN) * scale, `${name}: maximum of ${src.path} ${src.field}`);
  }
});

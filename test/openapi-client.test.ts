/**
 * The dashboard's API client is typed from the hub's OpenAPI document (web/src/api/schema.d.ts).
 * A route change that is not regenerated into it would let the dashboard drift from the API.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { SCHEMA_FILE, generateSchema } from '../scripts/gen-api.ts';

test('web/src/api/schema.d.ts is what `npm run gen:api` writes for the current routes', async () => {
  const committed = fs.readFileSync(SCHEMA_FILE, 'utf8');
  const fresh = await generateSchema();
  assert.ok(committed === fresh, 'web/src/api/schema.d.ts is stale: run `npm run gen:api` and commit the result');
});

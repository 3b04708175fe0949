/**
 * Messages for people (issue 23): every error code the hub can answer with (read from src/ by
 * scripts/error-codes.ts) has a message in English and German in the dashboard, and a refused
 * field carries the validator's keyword and limit so the dashboard can say it in both languages.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { errorCodes } from '../scripts/error-codes.ts';
import { ERROR_MESSAGES, FIELD_MESSAGES } from '../web/src/locales/errors.ts';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestUser } from './helpers/factories.ts';
import { client } from './helpers/http.ts';

describe('error messages for people', () => {
  const codes = errorCodes();

  test('the scan finds the codes of the spec and of the error helpers', () => {
    for (const c of [
      'OWNER_CANNOT_LEAVE',
      'CONFIRM_NAME_MISMATCH',
      'NOT_SHAREABLE',
      'SHARE_EXPIRED',
      'VALIDATION_FAILED',
      'URL_NOT_ALLOWED',
    ]) {
      assert.ok(codes.includes(c), `${c} is found`);
    }
    assert.ok(codes.length > 90, `${codes.length} codes`);
  });

  for (const lang of ['en', 'de'] as const) {
    test(`every code has a message in ${lang}`, () => {
      const missing = codes.filter((c) => !ERROR_MESSAGES[lang][c]?.trim());
      assert.deepEqual(missing, [], `codes without a ${lang} message: add them to web/src/locales/errors.ts`);
    });
    test(`every validator keyword the hub's schemas use has a ${lang} field message`, () => {
      for (const k of ['required', 'minLength', 'maxLength', 'minimum', 'maximum', 'format', 'pattern', 'type', 'enum']) {
        assert.ok(FIELD_MESSAGES[lang][k], `${k} in ${lang}`);
      }
    });
  }

  describe('a refused field names its keyword and limit', () => {
    let hub: Hub;
    let owner: TestUser;
    before(async () => {
      hub = await startHub();
      owner = await factories(hub).user();
    });
    after(() => hub.close());

    test('POST /auth/create-tenant with an empty name → VALIDATION_FAILED with {path, keyword: minLength, limit: 1}', async () => {
      const res = await client(hub.url).post('/auth/create-tenant', { name: '' }, owner);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.code, 'VALIDATION_FAILED');
      const issue = res.body.error.details.find((d: { path: string }) => d.path === 'name');
      assert.equal(issue.keyword, 'minLength');
      assert.equal(issue.limit, 1);
    });
  });
});

/**
 * Errors over HTTP: every refusal has one body shape, {"error": {"code", "message", "details"?}},
 * framework refusals (bad JSON, wrong content type, too large, unknown route) are mapped to it,
 * and none of them stops the process from serving.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, type TestUser } from './helpers/factories.ts';
import { call, client, assertError } from './helpers/http.ts';

interface Detail {
  in: string;
  path: string;
  message: string;
}

/** Asserts the one error shape and the expected status and code; returns the error object. */

function detailsOf(err: { details?: unknown }): Detail[] {
  assert.ok(Array.isArray(err.details), `details is a list: ${JSON.stringify(err.details)}`);
  return err.details as Detail[];
}

describe('errors', () => {
  let hub: Hub;
  let small: Hub;
  let api: ReturnType<typeof client>;
  let user: TestUser;
  let hubAdmin: TestUser;

  before(async () => {
    [hub, small] = await Promise.all([startHub(), startHub({ env: { BODY_LIMIT_BYTES: '2048' } })]);
    api = client(hub.url);
    const f = factories(hub);
    user = await f.user();
    hubAdmin = await f.user({ admin: true });
  });
  after(async () => {
    await Promise.all([hub?.close(), small?.close()]);
  });

  test('malformed JSON is 400 INVALID_JSON', async () => {
    const res = await api.call('POST', '/auth/login', { raw: '{"email": "a@b.c", "password": ' });
    const err = assertError(res, 400, 'INVALID_JSON');
    assert.equal(err.details, undefined);
  });

  test('an empty body declared as JSON is 400 INVALID_JSON', async () => {
    const res = await api.call('POST', '/auth/login', { raw: '' });
    assertError(res, 400, 'INVALID_JSON');
  });

  test('wrong types are 400 VALIDATION_FAILED with details naming the field; nothing is coerced', async () => {
    const res = await api.post('/auth/login', { email: 5, password: 'whatever-it-is' });
    const err = assertError(res, 400, 'VALIDATION_FAILED');
    const details = detailsOf(err);
    const email = details.find((d) => d.path === 'email');
    assert.ok(email, `details name the email field: ${JSON.stringify(details)}`);
    assert.equal(email.in, 'body');
    assert.match(email.message, /string/);
    assert.equal(
      details.some((d) => d.path === 'password'),
      false,
      'a valid field is not listed',
    );
    assert.match(err.message, /email/);

    // Several wrong fields are all listed (allErrors), and a boolean is not a string either.
    const both = await api.post('/auth/login', { email: true, password: 12345 });
    const paths = detailsOf(assertError(both, 400, 'VALIDATION_FAILED'))
      .map((d) => d.path)
      .sort();
    assert.deepEqual(paths, ['email', 'password']);
  });

  test('a missing required field is named in details', async () => {
    const res = await api.post('/auth/login', { email: user.email });
    const details = detailsOf(assertError(res, 400, 'VALIDATION_FAILED'));
    assert.deepEqual(
      details.map((d) => [d.in, d.path]),
      [['body', 'password']],
    );
  });

  test('unknown body fields are refused with 400 naming the field', async () => {
    const res = await api.post('/auth/login', { email: user.email, password: user.password, rememberMe: true });
    const err = assertError(res, 400, 'VALIDATION_FAILED');
    const details = detailsOf(err);
    assert.deepEqual(details, [{ in: 'body', path: 'rememberMe', message: 'is not a known field', keyword: 'additionalProperties' }]);
    assert.match(err.message, /rememberMe/);
  });

  test('a body over BODY_LIMIT_BYTES is 413 PAYLOAD_TOO_LARGE', async () => {
    const big = JSON.stringify({ email: 'someone@example.org', password: 'x'.repeat(4096) });
    assert.ok(Buffer.byteLength(big) > 2048);
    const res = await call(small.url, 'POST', '/auth/login', { raw: big });
    assertError(res, 413, 'PAYLOAD_TOO_LARGE');

    // Just under the limit the body is read and judged on its content instead.
    const fits = JSON.stringify({ email: 'someone@example.org', password: 'x'.repeat(200), extra: 'y'.repeat(1500) });
    assert.ok(Buffer.byteLength(fits) < 2048);
    const judged = await call(small.url, 'POST', '/auth/login', { raw: fits });
    assertError(judged, 400, 'VALIDATION_FAILED');

    // The default limit (1 MiB) accepts what the small hub refused.
    const normal = await api.call('POST', '/auth/login', { raw: big });
    assert.notEqual(normal.status, 413);
    assertError(normal, 400, 'VALIDATION_FAILED');
  });

  test('a body over the default 1 MiB limit is 413', async () => {
    const huge = JSON.stringify({ email: 'someone@example.org', password: 'x'.repeat(1_100_000) });
    const res = await api.call('POST', '/auth/login', { raw: huge });
    assertError(res, 413, 'PAYLOAD_TOO_LARGE');
  });

  test('a text/plain body on POST /auth/login is 415', async () => {
    const res = await api.call('POST', '/auth/login', {
      raw: JSON.stringify({ email: user.email, password: user.password }),
      contentType: 'text/plain',
    });
    assertError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const form = await api.call('POST', '/auth/login', {
      raw: 'email=a%40b.c&password=x',
      contentType: 'application/x-www-form-urlencoded',
    });
    assertError(form, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  test('an unknown route is 404 NOT_FOUND as JSON, inside and outside /api', async () => {
    const res = await api.get('/no/such/route');
    const err = assertError(res, 404, 'NOT_FOUND');
    assert.match(err.message, /GET \/api\/no\/such\/route/);

    const wrongMethod = await api.call('DELETE', '/health');
    assertError(wrongMethod, 404, 'NOT_FOUND');

    // Outside /api a GET belongs to the dashboard (its router answers deep links); any other
    // method, and a missing built asset, is the JSON 404.
    for (const [method, url] of [
      ['POST', '/definitely-not-here?x=1'],
      ['GET', '/assets/definitely-not-here.js?x=1'],
    ]) {
      const outside = await fetch(`${hub.url}${url}`, { method });
      const text = await outside.text();
      const body = JSON.parse(text);
      assertError({ status: outside.status, headers: outside.headers, body, text }, 404, 'NOT_FOUND');
      assert.doesNotMatch(body.error.message, /x=1/, 'query string is not echoed');
    }
  });

  test('a non-uuid path id on /admin/users/:id as hub admin is 400', async () => {
    const res = await api.get('/admin/users/not-a-uuid', hubAdmin);
    const details = detailsOf(assertError(res, 400, 'VALIDATION_FAILED'));
    assert.deepEqual(
      details.map((d) => [d.in, d.path]),
      [['params', 'id']],
    );

    const put = await api.put('/admin/users/12345', { name: 'X' }, hubAdmin);
    assertError(put, 400, 'VALIDATION_FAILED');

    // A well-formed id that does not exist is a 404, not a 400 or a 500.
    const missing = await api.get('/admin/users/00000000-0000-4000-8000-000000000000', hubAdmin);
    assertError(missing, 404, 'NOT_FOUND');
  });

  test('a wrong query value is 400 naming the parameter', async () => {
    const res = await api.post(`/auth/login?returnToken=perhaps`, { email: user.email, password: user.password });
    const details = detailsOf(assertError(res, 400, 'VALIDATION_FAILED'));
    assert.deepEqual(
      details.map((d) => [d.in, d.path]),
      [['querystring', 'returnToken']],
    );
  });

  test('guard and service errors have the same shape', async () => {
    assertError(await api.get('/auth/me'), 401, 'UNAUTHENTICATED');
    assertError(await api.get('/admin/users', user), 403, 'FORBIDDEN');
    const wrong = await api.post('/auth/login', { email: user.email, password: 'not-the-password' });
    assert.ok(wrong.status === 401, `wrong password is 401, got ${wrong.status}`);
    assertError(wrong, 401, wrong.body.error.code);
  });

  test('GET /api/docs/openapi.json is an OpenAPI 3 document listing /api/auth/login', async () => {
    const res = await api.get('/docs/openapi.json');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    assert.match(res.body.openapi, /^3\.\d+\.\d+$/);
    assert.equal(typeof res.body.info?.title, 'string');
    assert.ok(res.body.paths['/api/auth/login'], 'login is documented');
    assert.ok(res.body.paths['/api/auth/login'].post, 'as a POST');
    assert.ok(res.body.paths['/api/health']?.get, 'health is documented');
    assert.equal(res.body.paths['/api/docs/openapi.json'], undefined, 'the document itself is hidden');
  });

  test('GET /api/docs/ is a browsable HTML page', async () => {
    const res = await fetch(`${hub.url}/api/docs/`, { redirect: 'manual' });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await res.text(), /<html/i);
  });

  test('after all of that the hubs keep serving', async () => {
    for (const h of [hub, small]) {
      const health = await call(h.url, 'GET', '/health');
      assert.equal(health.status, 200);
      assert.equal(health.body.status, 'ok');
    }
    const login = await api.post('/auth/login', { email: user.email, password: user.password });
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.user.email, user.email);
  });
});

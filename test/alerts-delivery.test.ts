import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkUrl,
  isRetryable,
  OutboundRefused,
  parseAllowList,
  parseRetryAfter,
  postJson,
  type OutboundResult,
} from '../src/modules/alerts/delivery/outbound.ts';
import {
  DELIVERY_ID_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  signatureOf,
  verifySignature,
} from '../src/modules/alerts/delivery/signature.ts';
import { defaultWebhookBody, renderTemplate, SAMPLE_PAYLOAD, validateTemplate } from '../src/modules/alerts/delivery/template.ts';
import { sendOnce, type SendOptions } from '../src/modules/alerts/delivery/send.ts';
import type { AlertPayload } from '../src/modules/alerts/delivery/types.ts';
import { type Answer, closedPort, type Receiver, startReceiver } from './helpers/receivers.ts';
import { BLOCKED_URLS } from './helpers/ssrf.ts';

const SECRET = 'whsec-correct-horse-battery-staple';
const LOCAL = parseAllowList('127.0.0.1');
const NONE = parseAllowList('');
const hostile: AlertPayload = {
  ...SAMPLE_PAYLOAD,
  event: 'rare_species',
  commonName: 'Wren "the bold"\nline two \\ </script>',
  message: 'Rare species: "quoted" \\ back\nslash',
};

function options(over: Partial<SendOptions> = {}): SendOptions {
  return {
    allow: LOCAL,
    timeoutMs: 2000,
    telegramApiUrl: 'https://api.telegram.org',
    deliveryId: 'dlv-0001',
    mail: { send: async () => {} },
    ...over,
  };
}

describe('webhook signatures against a checking receiver', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver((r) => {
      const header = r.headers[SIGNATURE_HEADER.toLowerCase()];
      return verifySignature(SECRET, r.body, typeof header === 'string' ? header : undefined) ? { status: 200 } : { status: 401 };
    });
  });
  after(() => receiver.close());

  test('the right secret is accepted over the raw bytes, with delivery id, event and content headers', async () => {
    const target = { type: 'webhook' as const, url: `${receiver.url}/hook?x=1`, secret: SECRET, payloadTemplate: null };
    const r = await sendOnce(target, hostile, options());
    assert.equal(r.status, 200);
    assert.equal(r.error, null);
    const got = receiver.received.at(-1)!;
    assert.equal(got.method, 'POST');
    assert.equal(got.path, '/hook?x=1');
    assert.equal(got.body.toString('utf8'), r.requestBody);
    assert.equal(r.requestBody, defaultWebhookBody(hostile));
    assert.deepEqual(JSON.parse(r.requestBody).data.commonName, hostile.commonName);
    assert.equal(got.headers[SIGNATURE_HEADER.toLowerCase()], signatureOf(SECRET, got.body));
    assert.equal(got.headers[DELIVERY_ID_HEADER.toLowerCase()], 'dlv-0001');
    assert.equal(got.headers[EVENT_HEADER.toLowerCase()], 'rare_species');
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['user-agent'], 'Chorus-Hub');
  });

  test('a wrong secret gets 401', async () => {
    const r = await sendOnce({ type: 'webhook', url: receiver.url, secret: 'not-the-secret', payloadTemplate: null }, hostile, options());
    assert.equal(r.status, 401);
    assert.equal(isRetryable(r), false);
  });

  test('without a secret no signature header is sent, and the checking receiver refuses', async () => {
    const r = await sendOnce({ type: 'webhook', url: receiver.url, secret: null, payloadTemplate: null }, hostile, options());
    assert.equal(r.status, 401);
    const got = receiver.received.at(-1)!;
    assert.equal(got.headers[SIGNATURE_HEADER.toLowerCase()], undefined);
    assert.equal(got.headers[DELIVERY_ID_HEADER.toLowerCase()], 'dlv-0001');
  });

  test('a templated body is signed and sent byte for byte, as valid JSON with the hostile text intact', async () => {
    const payloadTemplate = '{"text": "{{message}} / {{commonName}}", "conf": {{confidence}}, "sp": "{{data.species}}"}';
    const r = await sendOnce({ type: 'webhook', url: receiver.url, secret: SECRET, payloadTemplate }, hostile, options());
    assert.equal(r.status, 200);
    const got = receiver.received.at(-1)!;
    assert.ok(got.body.equals(Buffer.from(r.requestBody, 'utf8')));
    const parsed = JSON.parse(got.body.toString('utf8'));
    assert.equal(parsed.text, `${hostile.message} / ${hostile.commonName}`);
    assert.equal(parsed.conf, 0.91);
    assert.equal(parsed.sp, 'Troglodytes troglodytes');
  });
});

test('a template that cannot render and a header that cannot be sent are refusals, not rejections', async () => {
  const r = await sendOnce({ type: 'webhook', url: 'http://127.0.0.1:1/', secret: null, payloadTemplate: '{{#a}}' }, hostile, options());
  assert.equal(r.refused, true);
  assert.match(r.error ?? '', /does not render/);
  const h = await postJson('http://127.0.0.1:1/', '{}', { 'x-bad': 'a\r\nb' }, { allow: LOCAL, timeoutMs: 2000 });
  assert.equal(h.refused, true);
  assert.equal(h.status, null);
});

test('verifySignature refuses near misses and a missing header', () => {
  const body = Buffer.from('{"a":1}');
  const good = signatureOf(SECRET, body);
  assert.equal(verifySignature(SECRET, body, good), true);
  assert.equal(verifySignature(SECRET, body, undefined), false);
  assert.equal(verifySignature(SECRET, body, good.slice(0, -1)), false);
  assert.equal(verifySignature(SECRET, body, good.slice(0, -1) + (good.endsWith('0') ? '1' : '0')), false);
  assert.equal(verifySignature(SECRET, Buffer.from('{"a": 1}'), good), false);
  assert.match(good, /^sha256=[0-9a-f]{64}$/);
});

describe('templates', () => {
  test('{{var}} is escaped for a JSON string, not for HTML', () => {
    const out = renderTemplate('{"m": "{{message}}", "c": "{{commonName}}", "e": "{{event}}"}', hostile);
    const parsed = JSON.parse(out);
    assert.equal(parsed.m, hostile.message);
    assert.equal(parsed.c, hostile.commonName);
    assert.ok(!out.includes('&quot;'));
  });

  test('a branch that renders only when a field is empty is checked too, with hostile text in the other fields', () => {
    // Before, this branch only rendered for the all-null sample, where the link is null too.
    const unquoted = '{{^species}}{"l": 1{{link}}}{{/species}}{{#species}}{}{{/species}}';
    assert.match(validateTemplate(unquoted) ?? '', /does not render valid JSON when species is empty/);
    assert.match(
      validateTemplate('{"a": 1{{^data.confidence}}{{detectionId}}{{/data.confidence}}}') ?? '',
      /when data\.confidence is empty/,
    );
    // Both branches of a conditional are fine on their own, though never together.
    assert.equal(validateTemplate('{"s": {{#species}}"{{species}}"{{/species}}{{^species}}null{{/species}}, "m": "{{message}}"}'), null);
    const many = ['event', 'ruleName', 'teamName', 'message', 'species', 'commonName', 'confidence', 'satelliteName', 'link'];
    assert.match(validateTemplate(`{ ${many.map((n) => `{{#${n}}}{{/${n}}}`).join('')} }`) ?? '', /more than 8 different fields/);
  });

  test('unescaped tags are escaped too: a value cannot close its string and add keys', () => {
    const template = '{{^species}}{"sat": "{{{satelliteName}}}", "by": "{{& ruleName}}"}{{/species}}{{#species}}{}{{/species}}';
    assert.equal(validateTemplate(template), null);
    const injected = 'Garden", "admin": true, "x": "';
    const out = renderTemplate(template, {
      ...SAMPLE_PAYLOAD,
      event: 'satellite_offline',
      species: null,
      satelliteName: injected,
      ruleName: injected,
    });
    assert.deepEqual(JSON.parse(out), { sat: injected, by: injected });
  });

  test('the view has no prototype to reach through', () => {
    assert.equal(renderTemplate('{{constructor}}|{{toString}}|{{data.constructor}}', SAMPLE_PAYLOAD), '||');
  });

  test('validateTemplate accepts a good template and refuses broken ones', () => {
    assert.equal(validateTemplate('{"text": "{{message}}", "species": "{{species}}", "link": "{{link}}"}'), null);
    assert.match(validateTemplate('{"a": {{confidence}}') ?? '', /valid JSON/);
    assert.match(validateTemplate('{"a": "{{#message}}"}') ?? '', /syntax/);
    // Hostile text outside a string breaks the JSON: caught by the hostile sample.
    assert.match(validateTemplate('{"a": {{commonName}}}') ?? '', /valid JSON/);
    // Absent values render empty: a bare number slot breaks for a satellite_offline alert.
    assert.match(validateTemplate('{"a": {{confidence}}}') ?? '', /empty/);
    assert.match(validateTemplate(`{"a": "${'x'.repeat(9000)}"}`) ?? '', /longer than/);
  });
});

describe('SSRF policy', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver.close());

  for (const url of BLOCKED_URLS) {
    test(`refuses ${url} with an empty allow list`, async () => {
      await assert.rejects(checkUrl(url, NONE), (e: unknown) => e instanceof OutboundRefused && e.code === 'URL_NOT_ALLOWED');
      const r = await postJson(url, '{}', {}, { allow: NONE, timeoutMs: 2000 });
      assert.equal(r.status, null);
      assert.equal(r.refused, true);
      assert.match(r.error ?? '', /private, local or reserved/);
      assert.equal(isRetryable(r), false);
    });
  }

  test('the local receiver is refused, then reached once listed by address, range or name', async () => {
    const count = receiver.received.length;
    const refused = await postJson(receiver.url, '{}', {}, { allow: NONE, timeoutMs: 2000 });
    assert.equal(refused.refused, true);
    assert.equal(receiver.received.length, count, 'nothing reached the receiver');
    for (const spec of ['127.0.0.1', ' 10.0.0.0/8 , 127.0.0.0/8 ', 'LocalHost']) {
      const allow = parseAllowList(spec);
      const url = spec === 'LocalHost' ? `http://localhost:${receiver.port}/` : receiver.url;
      await checkUrl(url, allow);
      const r = await postJson(url, '{"n":1}', {}, { allow, timeoutMs: 2000 });
      assert.equal(r.status, 200, spec);
      assert.equal(r.responseBody, 'ok');
    }
    assert.equal(receiver.received.length, count + 3);
  });

  test('malformed, non-http and credentialed URLs are URL_INVALID', async () => {
    for (const url of ['not a url', 'ftp://example.com/', 'file:///etc/passwd', 'https://user:pass@example.com/', 'gopher://127.0.0.1/']) {
      await assert.rejects(checkUrl(url, LOCAL), (e: unknown) => e instanceof OutboundRefused && e.code === 'URL_INVALID', url);
      const r = await postJson(url, '{}', {}, { allow: LOCAL, timeoutMs: 2000 });
      assert.equal(r.refused, true, url);
      assert.equal(r.status, null);
    }
  });

  test('a name that does not resolve is URL_INVALID', async () => {
    await assert.rejects(
      checkUrl('http://no-such-host.invalid/', NONE),
      (e: unknown) => e instanceof OutboundRefused && e.code === 'URL_INVALID' && /does not resolve/.test(e.message),
    );
  });

  test('parseAllowList names a bad entry', () => {
    assert.deepEqual(parseAllowList('  '), { names: new Set(), ranges: [] });
    assert.throws(() => parseAllowList('127.0.0.1, 10.0.0.0/33'), /"10\.0\.0\.0\/33"/);
    assert.throws(() => parseAllowList('hooks.example.com, not a host'), /"not a host"/);
    assert.throws(() => parseAllowList('::1/129'), /"::1\/129"/);
    const ok = parseAllowList('Hooks.Example.com, ::1/128, [fd00::1], 192.168.1.0/24');
    assert.ok(ok.names.has('hooks.example.com'));
    assert.equal(ok.ranges.length, 3);
  });
});

describe('answers, time-outs and retry hints', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver((r): Answer => {
      if (r.path === '/hang') return 'hang';
      if (r.path === '/429') return { status: 429, headers: { 'retry-after': '3' } };
      if (r.path === '/404') return { status: 404, body: 'no such hook' };
      if (r.path === '/503') return { status: 503 };
      if (r.path === '/302') return { status: 302, headers: { location: 'http://127.0.0.1:1/' } };
      if (r.path === '/big') return { status: 200, body: 'y'.repeat(100_000) };
      return { status: 200 };
    });
  });
  after(() => receiver.close());

  const post = (path: string, timeoutMs = 2000): Promise<OutboundResult> =>
    postJson(`${receiver.url}${path}`, '{}', {}, { allow: LOCAL, timeoutMs });

  test('a receiver that never answers times out, retryably', async () => {
    const r = await post('/hang', 200);
    assert.equal(r.status, null);
    assert.match(r.error ?? '', /timed out after 200 ms/);
    assert.equal(r.refused, false);
    assert.equal(isRetryable(r), true);
  });

  test('429 carries Retry-After; 404 is final; 503 is retryable; a 302 is not followed', async () => {
    const tooMany = await post('/429');
    assert.equal(tooMany.status, 429);
    assert.equal(tooMany.retryAfterMs, 3000);
    assert.equal(isRetryable(tooMany), true);
    const missing = await post('/404');
    assert.equal(missing.status, 404);
    assert.equal(missing.responseBody, 'no such hook');
    assert.equal(isRetryable(missing), false);
    const down = await post('/503');
    assert.equal(down.status, 503);
    assert.equal(down.retryAfterMs, null);
    assert.equal(isRetryable(down), true);
    const moved = await post('/302');
    assert.equal(moved.status, 302);
    assert.equal(isRetryable(moved), false);
    assert.equal(receiver.received.filter((r) => r.path === '/302').length, 1);
  });

  test('only the first 2 KB of a response body is kept', async () => {
    const r = await post('/big');
    assert.equal(r.status, 200);
    assert.equal(r.responseBody, 'y'.repeat(2048));
  });

  test('an unreachable port is a retryable network error', async () => {
    const r = await postJson(`http://127.0.0.1:${await closedPort()}/`, '{}', {}, { allow: LOCAL, timeoutMs: 2000 });
    assert.equal(r.status, null);
    assert.match(r.error ?? '', /ECONNREFUSED/);
    assert.equal(isRetryable(r), true);
  });

  test('parseRetryAfter reads seconds and dates, caps at an hour, ignores junk', () => {
    const now = Date.parse('2025-05-01T00:00:00Z');
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter('Thu, 01 May 2025 00:00:30 GMT', now), 30_000);
    assert.equal(parseRetryAfter('Wed, 30 Apr 2025 00:00:00 GMT', now), 0);
    assert.equal(parseRetryAfter('999999', now), 3_600_000);
    assert.equal(parseRetryAfter('soon', now), null);
    assert.equal(parseRetryAfter(undefined, now), null);
  });
});

describe('sendOnce to chat and mail', () => {
  const TOKEN = '123456789:AAH-secret_bot_token';
  let telegram: Receiver;
  before(async () => {
    telegram = await startReceiver(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' }));
  });
  after(() => telegram.close());

  test('chat_bot posts sendMessage JSON to /bot<token>/sendMessage', async () => {
    const r = await sendOnce(
      { type: 'chat_bot', botToken: TOKEN, chatId: '-100200300' },
      hostile,
      options({ telegramApiUrl: telegram.url + '/' }),
    );
    assert.equal(r.status, 200);
    const got = telegram.received.at(-1)!;
    assert.equal(got.path, `/bot${TOKEN}/sendMessage`);
    const body = JSON.parse(got.body.toString('utf8'));
    assert.equal(body.chat_id, '-100200300');
    assert.equal(body.parse_mode, 'HTML');
    assert.ok(body.text.includes('&lt;/script&gt;'));
    assert.ok(!body.text.includes('</script>'));
  });

  test('a receiver echoing the token back does not get it into the stored response', async () => {
    const echo = await startReceiver((r) => ({ status: 401, body: `{"ok":false,"description":"Unauthorized: ${r.path}"}` }));
    try {
      const r = await sendOnce({ type: 'chat_bot', botToken: TOKEN, chatId: '1' }, hostile, options({ telegramApiUrl: echo.url }));
      assert.equal(r.status, 401);
      assert.equal(echo.received.at(-1)!.path, `/bot${TOKEN}/sendMessage`);
      assert.ok(r.responseBody.includes('Unauthorized'));
      assert.ok(!r.responseBody.includes('AAH-secret_bot_token'), r.responseBody);
    } finally {
      await echo.close();
    }
  });

  test('the bot token never shows in an error', async () => {
    const unreachable = `http://127.0.0.1:${await closedPort()}`;
    const r = await sendOnce({ type: 'chat_bot', botToken: TOKEN, chatId: '1' }, hostile, options({ telegramApiUrl: unreachable }));
    assert.equal(r.status, null);
    assert.ok(r.error);
    assert.ok(!r.error.includes('AAH-secret_bot_token'));
    assert.ok(!r.requestBody.includes('AAH-secret_bot_token'));
    const refused = await sendOnce(
      { type: 'chat_bot', botToken: TOKEN, chatId: '1' },
      hostile,
      options({ allow: NONE, telegramApiUrl: telegram.url }),
    );
    assert.equal(refused.refused, true);
    assert.ok(!(refused.error ?? '').includes('AAH-secret_bot_token'));
    const badToken = await sendOnce({ type: 'chat_bot', botToken: 'not a token/../x', chatId: '1' }, hostile, options());
    assert.equal(badToken.refused, true);
  });

  test('chat webhooks get their platform body', async () => {
    for (const type of ['chat_blocks', 'chat_cards', 'chat_embeds'] as const) {
      const r = await sendOnce({ type, webhookUrl: `${telegram.url}/hooks/T000/B000/XXXX` }, hostile, options());
      assert.equal(r.status, 200, type);
      const body = JSON.parse(telegram.received.at(-1)!.body.toString('utf8'));
      if (type === 'chat_blocks') assert.ok(Array.isArray(body.blocks));
      if (type === 'chat_cards') assert.equal(body.type, 'message');
      if (type === 'chat_embeds') assert.equal(body.embeds.length, 1);
    }
  });

  test('email sends one message per address and reports a failure as retryable', async () => {
    const sent: Array<{ to: string; subject: string; text: string }> = [];
    const mail = {
      send: async (m: { to: string; subject: string; text: string }) => {
        if (m.to === 'bounce@example.com') throw new Error('mailbox unavailable');
        sent.push(m);
      },
    };
    const ok = await sendOnce({ type: 'email', addresses: ['a@example.com', 'b@example.com'] }, hostile, options({ mail }));
    assert.equal(ok.error, null);
    assert.deepEqual(
      sent.map((m) => m.to),
      ['a@example.com', 'b@example.com'],
    );
    assert.ok(!sent[0].subject.includes('\n'));
    const bad = await sendOnce({ type: 'email', addresses: ['bounce@example.com'] }, hostile, options({ mail }));
    assert.match(bad.error ?? '', /mailbox unavailable/);
    assert.equal(isRetryable(bad), true);
  });
});

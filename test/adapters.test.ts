/**
 * Ports and their adapters (DESIGN.md §2): the key-value port in memory (driven by a
 * ManualClock) and on real Redis when REDIS_URL is set; the mail port over real SMTP to a
 * server started here, and recorded-and-dropped without SMTP_URL.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';
import { ManualClock } from '../src/core/clock.ts';
import { createKv, createMemoryKv, createRedisKv, type Kv } from '../src/infra/kv/index.ts';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories } from './helpers/factories.ts';
import { client } from './helpers/http.ts';

const REDIS_URL = process.env.REDIS_URL;

/** Behaviours every adapter of the port must show, without waiting for time to pass. */
function sharedKvBehaviours(make: () => { kv: Kv; key: (k: string) => string }) {
  test('get of a missing key is null; set then get returns the value; set overwrites', async () => {
    const { kv, key } = make();
    assert.equal(await kv.get(key('missing')), null);
    await kv.set(key('a'), 'one', 60);
    assert.equal(await kv.get(key('a')), 'one');
    await kv.set(key('a'), 'two', 60);
    assert.equal(await kv.get(key('a')), 'two');
    assert.equal(await kv.get(key('b')), null, 'other keys untouched');
  });

  test('setIfAbsent sets once, then refuses and keeps the first value', async () => {
    const { kv, key } = make();
    assert.equal(await kv.setIfAbsent(key('lock'), 'first', 60), true);
    assert.equal(await kv.setIfAbsent(key('lock'), 'second', 60), false);
    assert.equal(await kv.get(key('lock')), 'first');
    await kv.set(key('plain'), 'x', 60);
    assert.equal(await kv.setIfAbsent(key('plain'), 'y', 60), false, 'a value from set counts as present');
    assert.equal(await kv.get(key('plain')), 'x');
  });

  test('incr counts from 1 per key', async () => {
    const { kv, key } = make();
    assert.equal(await kv.incr(key('n'), 60), 1);
    assert.equal(await kv.incr(key('n'), 60), 2);
    assert.equal(await kv.incr(key('n'), 60), 3);
    assert.equal(await kv.incr(key('m'), 60), 1, 'counters are per key');
    assert.equal(await kv.get(key('n')), '3', 'the counter reads back as text');
  });

  test('del removes a key; setIfAbsent and incr start over', async () => {
    const { kv, key } = make();
    await kv.set(key('d'), 'v', 60);
    await kv.del(key('d'));
    assert.equal(await kv.get(key('d')), null);
    await kv.del(key('never-set'));
    assert.equal(await kv.setIfAbsent(key('d'), 'again', 60), true);
    await kv.incr(key('c'), 60);
    await kv.incr(key('c'), 60);
    await kv.del(key('c'));
    assert.equal(await kv.incr(key('c'), 60), 1);
  });
}

describe('key-value port: in memory', () => {
  let clock: ManualClock;
  let kv: Kv;
  const fresh = () => {
    clock = new ManualClock();
    clock.freeze(new Date('2030-01-01T00:00:00Z'));
    kv = createMemoryKv(clock, 'mem:');
    return { kv, key: (k: string) => k };
  };

  sharedKvBehaviours(fresh);

  test('createKv without REDIS_URL picks the memory adapter on the given clock', async () => {
    const c = new ManualClock();
    c.freeze();
    const chosen = createKv({ redisUrl: null, kvPrefix: 'x:' }, c);
    await chosen.set('k', 'v', 5);
    assert.equal(await chosen.get('k'), 'v');
    c.advance(5_000);
    assert.equal(await chosen.get('k'), null, 'expiry follows the injected clock');
    await chosen.close();
  });

  test('a value lives exactly its TTL on the clock', async () => {
    fresh();
    await kv.set('t', 'v', 10);
    clock.advance(9_999);
    assert.equal(await kv.get('t'), 'v', 'still there 1 ms before the TTL');
    clock.advance(1);
    assert.equal(await kv.get('t'), null, 'gone at the TTL');
  });

  test('set renews the TTL from now', async () => {
    fresh();
    await kv.set('r', 'a', 10);
    clock.advance(8_000);
    await kv.set('r', 'b', 10);
    clock.advance(8_000);
    assert.equal(await kv.get('r'), 'b', 'the second set started a new 10 s');
    clock.advance(2_000);
    assert.equal(await kv.get('r'), null);
  });

  test('setIfAbsent succeeds again once the first value expired', async () => {
    fresh();
    assert.equal(await kv.setIfAbsent('once', 'a', 30), true);
    clock.advance(29_000);
    assert.equal(await kv.setIfAbsent('once', 'b', 30), false);
    clock.advance(1_000);
    assert.equal(await kv.setIfAbsent('once', 'c', 30), true);
    assert.equal(await kv.get('once'), 'c');
  });

  test('incr keeps one window from the first hit; later hits do not extend it', async () => {
    fresh();
    assert.equal(await kv.incr('w', 60), 1);
    clock.advance(30_000);
    assert.equal(await kv.incr('w', 60), 2);
    clock.advance(29_999);
    assert.equal(await kv.incr('w', 60), 3, 'same window 1 ms before it closes');
    clock.advance(1);
    assert.equal(await kv.get('w'), null, 'the window closed 60 s after the first hit');
    assert.equal(await kv.incr('w', 60), 1, 'a new window starts at 1');
    clock.advance(59_000);
    assert.equal(await kv.incr('w', 60), 2);
  });

  test('close empties the store', async () => {
    fresh();
    await kv.set('k', 'v', 60);
    await kv.close();
    assert.equal(await kv.get('k'), null);
  });
});

describe('key-value port: Redis', { skip: REDIS_URL ? false : 'REDIS_URL is not set' }, () => {
  const prefix = `chorus-adapters-test:${crypto.randomBytes(6).toString('hex')}:`;
  let kv: Kv;
  let raw: Redis;
  let n = 0;

  before(() => {
    kv = createRedisKv(REDIS_URL!, prefix);
    raw = new Redis(REDIS_URL!);
  });
  after(async () => {
    const keys = await raw.keys(`${prefix}*`);
    if (keys.length) await raw.del(...keys);
    await kv.close();
    await raw.quit();
  });

  // Each test gets its own key space under the run's prefix.
  sharedKvBehaviours(() => {
    const scope = `t${n++}:`;
    return { kv, key: (k: string) => scope + k };
  });

  test('keys carry the prefix in Redis, and set/setIfAbsent/incr give them the TTL', async () => {
    await kv.set('ttl:set', 'v', 100);
    await kv.setIfAbsent('ttl:nx', 'v', 200);
    await kv.incr('ttl:incr', 300);
    assert.equal(await raw.get(`${prefix}ttl:set`), 'v', 'stored under the prefix');
    const ttl = async (k: string) => raw.ttl(prefix + k);
    const [a, b, c] = [await ttl('ttl:set'), await ttl('ttl:nx'), await ttl('ttl:incr')];
    assert.ok(a > 90 && a <= 100, `set TTL ${a}`);
    assert.ok(b > 190 && b <= 200, `setIfAbsent TTL ${b}`);
    assert.ok(c > 290 && c <= 300, `incr TTL ${c}`);
  });

  test('incr starts the window on the first hit only', async () => {
    assert.equal(await kv.incr('win', 100), 1);
    assert.equal(await kv.incr('win', 5000), 2);
    const t = await raw.ttl(`${prefix}win`);
    assert.ok(t > 0 && t <= 100, `a later incr does not extend the window (TTL ${t})`);
  });

  test('a refused setIfAbsent leaves value and TTL alone', async () => {
    assert.equal(await kv.setIfAbsent('keep', 'first', 100), true);
    assert.equal(await kv.setIfAbsent('keep', 'second', 5000), false);
    assert.equal(await kv.get('keep'), 'first');
    const t = await raw.ttl(`${prefix}keep`);
    assert.ok(t > 0 && t <= 100, `TTL ${t}`);
  });

  test('two prefixes on one Redis do not see each other', async () => {
    const other = createRedisKv(REDIS_URL!, `${prefix}other:`);
    try {
      await kv.set('shared-name', 'mine', 60);
      assert.equal(await other.get('shared-name'), null);
      assert.equal(await other.setIfAbsent('shared-name', 'theirs', 60), true);
      assert.equal(await kv.get('shared-name'), 'mine');
      assert.equal(await other.get('shared-name'), 'theirs');
    } finally {
      await other.close();
    }
  });

  test('createKv with a Redis URL picks the Redis adapter', async () => {
    const chosen = createKv({ redisUrl: REDIS_URL!, kvPrefix: `${prefix}chosen:` }, new ManualClock());
    try {
      await chosen.set('k', 'v', 60);
      assert.equal(await raw.get(`${prefix}chosen:k`), 'v');
    } finally {
      await chosen.close();
    }
  });
});

interface Received {
  from: string | undefined;
  to: string[];
  raw: string;
}

/** Decodes a quoted-printable body part (soft line breaks and =XX escapes). */
function decodeQuotedPrintable(s: string): string {
  const bytes = s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/** The text of a single-part message, decoded by its transfer encoding. */
function bodyText(raw: string): string {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split);
  const body = raw.slice(split + 4);
  const encoding = /^content-transfer-encoding:\s*(\S+)/im.exec(head)?.[1]?.toLowerCase();
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body);
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

describe('mail port', () => {
  let smtp: SMTPServer;
  let smtpPort: number;
  const received: Received[] = [];
  let smtpHub: Hub;
  let plainHub: Hub;

  before(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      allowInsecureAuth: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const from = session.envelope.mailFrom;
          received.push({
            from: from ? (from as SMTPServerAddress).address : undefined,
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      smtp.once('error', reject);
      smtp.listen(0, '127.0.0.1', () => resolve());
    });
    smtpPort = (smtp as unknown as { server: { address(): AddressInfo } }).server.address().port;
    [smtpHub, plainHub] = await Promise.all([
      startHub({ env: { SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, MAIL_FROM: 'Chorus Test <hub@chorus.test>' } }),
      startHub(),
    ]);
  });
  after(async () => {
    await Promise.all([smtpHub?.close(), plainHub?.close()]);
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  test('with SMTP_URL, forgot-password delivers exactly one message with a working reset link', async () => {
    assert.equal(smtpHub.infra.mail.configured, true);
    const user = await factories(smtpHub).user();
    const api = client(smtpHub.url);

    const res = await api.post('/auth/forgot-password', { email: user.email });
    assert.equal(res.status, 204, res.text);
    // An address without an account sends nothing (and still answers 204).
    const unknown = await api.post('/auth/forgot-password', { email: `nobody-${crypto.randomBytes(3).toString('hex')}@example.org` });
    assert.equal(unknown.status, 204);

    assert.equal(received.length, 1, `one message reached the SMTP server, got ${received.length}`);
    const [msg] = received;
    assert.deepEqual(msg.to, [user.email], 'sent to that address only');
    assert.equal(msg.from, 'hub@chorus.test', 'envelope sender from MAIL_FROM');
    assert.match(msg.raw, /^subject: Reset your Chorus password\r?$/im);
    assert.match(msg.raw, new RegExp(`^to: ${user.email.replace(/[.]/g, '\\.')}\\r?$`, 'im'));

    const text = bodyText(msg.raw);
    const link = /http:\/\/chorus\.test\/reset-password\?token=([0-9a-f]{64})/.exec(text);
    assert.ok(link, `the text holds the reset link: ${text}`);

    const recorded = smtpHub.infra.mail.recorded();
    assert.equal(recorded.length, 1);
    assert.equal(recorded[0].to, user.email);
    assert.equal(recorded[0].delivered, true);

    // The link is the real one: its token sets a new password that then signs in.
    const reset = await api.post('/auth/reset-password', { token: link[1], password: 'a-brand-new-password' });
    assert.equal(reset.status, 204, reset.text);
    const login = await api.post('/auth/login', { email: user.email, password: 'a-brand-new-password' });
    assert.equal(login.status, 200, login.text);
  });

  test('without SMTP_URL the mail is recorded with delivered false and nothing is sent', async () => {
    const before = received.length;
    assert.equal(plainHub.infra.mail.configured, false);
    const user = await factories(plainHub).user();
    const res = await client(plainHub.url).post('/auth/forgot-password', { email: user.email });
    assert.equal(res.status, 204, res.text);

    const recorded = plainHub.infra.mail.recorded();
    assert.equal(recorded.length, 1);
    const [mail] = recorded;
    assert.equal(mail.to, user.email);
    assert.equal(mail.delivered, false);
    assert.equal(mail.subject, 'Reset your Chorus password');
    assert.match(mail.text, /http:\/\/chorus\.test\/reset-password\?token=[0-9a-f]{64}/);
    assert.ok(mail.at instanceof Date);
    assert.equal(received.length, before, 'the SMTP server got nothing from this hub');
  });
});

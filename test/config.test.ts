// test/run.mjs: the same on any parts — configuration is parsed from literal environments; no hub starts.
/**
 * loadConfig(env): the one place the environment is read. Defaults, refusals with a message
 * that names the variable, and the secret kept in the data dir across restarts.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../src/config.ts';

const dirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-config-'));
  dirs.push(dir);
  return dir;
}

/** A valid base: its own data dir and a secret, so no test writes into the working directory. */
function env(overrides: Record<string, string | undefined> = {}) {
  return { CHORUS_DATA_DIR: tempDir(), CHORUS_SECRET: 'x'.repeat(32), ...overrides };
}

function refuses(e: Record<string, string | undefined>, pattern: RegExp) {
  assert.throws(
    () => loadConfig(e),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
      assert.match(err.message, pattern);
      return true;
    },
  );
}

describe('loadConfig', () => {
  after(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  test('defaults: port 8080, ./data resolved against the working directory, embedded parts', () => {
    // The default data dir is ./data; the secret is given so nothing is written there.
    const c = loadConfig({ CHORUS_SECRET: 's'.repeat(40) });
    assert.equal(c.port, 8080);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.mode, 'full');
    assert.equal(c.dataDir, path.resolve('./data'));
    assert.ok(path.isAbsolute(c.dataDir));
    assert.equal(c.databaseUrl, null);
    assert.equal(c.redisUrl, null);
    assert.equal(c.smtpUrl, null);
    assert.equal(c.internalKey, null);
    assert.equal(c.publicUrl, 'http://localhost:8080');
    assert.deepEqual({ ...c.admin }, { email: null, password: null });
    assert.equal(c.bodyLimitBytes, 1_048_576);
    assert.equal(c.logLevel, 'info');
    assert.equal(c.kvPrefix, 'chorus:');
    assert.deepEqual(c.trustProxy, { kind: 'list', entries: ['127.0.0.0/8', '::1/128'] }, 'only a proxy on the same host');
    assert.deepEqual(c.allowedOrigins, []);
    assert.deepEqual(c.limits.register, { points: 10, durationSec: 3600 });
    assert.ok(Object.isFrozen(c));
  });

  test('a relative CHORUS_DATA_DIR is resolved to an absolute path', () => {
    const c = loadConfig({ CHORUS_DATA_DIR: 'some/rel', CHORUS_SECRET: 's'.repeat(32) });
    assert.equal(c.dataDir, path.resolve('some/rel'));
  });

  test('values from the environment are read', () => {
    const c = loadConfig(
      env({
        PORT: '9001',
        HOST: '127.0.0.1',
        DATABASE_URL: 'postgresql://u:p@db:5432/chorus',
        REDIS_URL: 'rediss://cache:6380',
        SMTP_URL: 'smtps://mail.example.org',
        CHORUS_PUBLIC_URL: 'https://hub.example.org/',
        BODY_LIMIT_BYTES: '2048',
        CHORUS_MODE: 'api',
        TRUST_PROXY: 'false',
      }),
    );
    assert.equal(c.port, 9001);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.databaseUrl, 'postgresql://u:p@db:5432/chorus');
    assert.equal(c.redisUrl, 'rediss://cache:6380');
    assert.equal(c.smtpUrl, 'smtps://mail.example.org');
    assert.equal(c.publicUrl, 'https://hub.example.org', 'trailing slash dropped');
    assert.equal(c.bodyLimitBytes, 2048);
    assert.equal(c.mode, 'api');
    assert.deepEqual(c.trustProxy, { kind: 'none' });
  });

  test('TRUST_PROXY takes false, true, or addresses, CIDRs and loopback; anything else is refused', () => {
    assert.deepEqual(loadConfig(env({ TRUST_PROXY: 'true' })).trustProxy, { kind: 'all' });
    assert.deepEqual(loadConfig(env({ TRUST_PROXY: '10.0.0.5, 192.168.0.0/16,loopback,fd00::1' })).trustProxy, {
      kind: 'list',
      entries: ['10.0.0.5/32', '192.168.0.0/16', '127.0.0.0/8', '::1/128', 'fd00::1/128'],
    });
    refuses(env({ TRUST_PROXY: 'proxy.example.org' }), /^TRUST_PROXY: "proxy.example.org" is not an address, a CIDR or "loopback"/);
    refuses(env({ TRUST_PROXY: '10.0.0.0/33' }), /^TRUST_PROXY: "10.0.0.0\/33"/);
    refuses(env({ TRUST_PROXY: ' , ' }), /^TRUST_PROXY: name at least one proxy address/);
  });

  test('CHORUS_ALLOWED_ORIGINS takes origins; LIMIT_* take COUNT/WINDOW', () => {
    const c = loadConfig(env({ CHORUS_ALLOWED_ORIGINS: 'https://app.example.org, http://localhost:5173', LIMIT_TOKEN_GUESSES: '3/90s' }));
    assert.deepEqual(c.allowedOrigins, ['https://app.example.org', 'http://localhost:5173']);
    assert.deepEqual(c.limits.tokenGuesses, { points: 3, durationSec: 90 });
    refuses(env({ CHORUS_ALLOWED_ORIGINS: 'https://app.example.org/path' }), /^CHORUS_ALLOWED_ORIGINS takes origins/);
    refuses(env({ CHORUS_ALLOWED_ORIGINS: 'app.example.org' }), /^CHORUS_ALLOWED_ORIGINS takes origins/);
    refuses(env({ LIMIT_REGISTER: '10 per hour' }), /^LIMIT_REGISTER must be COUNT\/WINDOW/);
    refuses(env({ LIMIT_API_KEYS: '0/1h' }), /^LIMIT_API_KEYS must be COUNT\/WINDOW/);
  });

  test('PORT that is not a whole number, or out of range, is refused naming PORT', () => {
    refuses(env({ PORT: 'abc' }), /^PORT must be a whole number, got "abc"/);
    refuses(env({ PORT: '80.5' }), /^PORT must be a whole number/);
    refuses(env({ PORT: '-1' }), /^PORT must be a whole number/);
    refuses(env({ PORT: '70000' }), /^PORT must be between 0 and 65535, got 70000/);
    assert.equal(loadConfig(env({ PORT: '0' })).port, 0);
    assert.equal(loadConfig(env({ PORT: '' })).port, 8080, 'empty means unset');
  });

  test('DATABASE_URL with another scheme, or not a URL, is refused', () => {
    refuses(env({ DATABASE_URL: 'mysql://root@localhost/chorus' }), /^DATABASE_URL must use postgres: or postgresql:, got "mysql:"/);
    refuses(env({ DATABASE_URL: 'not a url' }), /^DATABASE_URL is not a valid URL/);
  });

  test('a password in a refused URL is not echoed', () => {
    // A non-numeric port makes the URL invalid; the message shows it with the password masked.
    refuses(
      env({ DATABASE_URL: 'postgres://user:hunter2@db:notaport/chorus' }),
      /^DATABASE_URL is not a valid URL: "postgres:\/\/user:\*\*\*@db:notaport\/chorus"$/,
    );
    refuses(env({ REDIS_URL: 'redis://user:hunter2@bad host' }), /^REDIS_URL is not a valid URL: "redis:\/\/user:\*\*\*@bad host"$/);
  });

  test('REDIS_URL and SMTP_URL schemes are checked', () => {
    refuses(env({ REDIS_URL: 'http://cache:6379' }), /^REDIS_URL must use redis: or rediss:/);
    refuses(env({ SMTP_URL: 'http://mail' }), /^SMTP_URL must use smtp: or smtps:/);
  });

  test('CHORUS_ADMIN_EMAIL without CHORUS_ADMIN_PASSWORD (and the reverse) is refused', () => {
    refuses(env({ CHORUS_ADMIN_EMAIL: 'root@example.org' }), /CHORUS_ADMIN_EMAIL and CHORUS_ADMIN_PASSWORD must be set together/);
    refuses(env({ CHORUS_ADMIN_PASSWORD: 'long-enough-password' }), /must be set together/);
    refuses(
      env({ CHORUS_ADMIN_EMAIL: 'root@example.org', CHORUS_ADMIN_PASSWORD: 'short' }),
      /CHORUS_ADMIN_PASSWORD must be at least 10 characters/,
    );
    const c = loadConfig(env({ CHORUS_ADMIN_EMAIL: 'root@example.org', CHORUS_ADMIN_PASSWORD: 'long-enough-password' }));
    assert.deepEqual({ ...c.admin }, { email: 'root@example.org', password: 'long-enough-password' });
  });

  test('a CHORUS_SECRET shorter than 32 characters is refused', () => {
    refuses(env({ CHORUS_SECRET: 'x'.repeat(31) }), /^CHORUS_SECRET must be at least 32 characters/);
    assert.equal(loadConfig(env({ CHORUS_SECRET: 'y'.repeat(32) })).secret, 'y'.repeat(32));
  });

  test('other invalid values: short internal key, unknown mode and log level, body limit range', () => {
    refuses(env({ CHORUS_INTERNAL_KEY: 'short' }), /^CHORUS_INTERNAL_KEY must be at least 32 characters/);
    refuses(env({ CHORUS_MODE: 'everything' }), /^CHORUS_MODE must be one of full, dispatcher, api, worker/);
    refuses(env({ LOG_LEVEL: 'loud' }), /^LOG_LEVEL must be one of/);
    refuses(env({ BODY_LIMIT_BYTES: '10' }), /^BODY_LIMIT_BYTES must be between 1024/);
    refuses(env({ CHORUS_PUBLIC_URL: 'ftp://hub' }), /^CHORUS_PUBLIC_URL must use http: or https:/);
    refuses(env({ CHORUS_DISPATCHER_ID: 'd/1' }), /^CHORUS_DISPATCHER_ID must be 1 to 32 letters, digits, _ or -/);
    refuses(env({ CHORUS_DISPATCHER_ID: 'd'.repeat(33) }), /^CHORUS_DISPATCHER_ID must be 1 to 32/);
    assert.equal(loadConfig(env({ CHORUS_DISPATCHER_ID: 'd-2' })).dispatcherId, 'd-2');
    assert.equal(loadConfig(env({})).dispatcherId, null);
  });

  test('without CHORUS_SECRET a secret is generated once, kept in the data dir, and reused', () => {
    const dir = path.join(tempDir(), 'nested', 'data');
    const first = loadConfig({ CHORUS_DATA_DIR: dir });
    assert.ok(first.secret.length >= 32, 'generated secret is long enough');
    assert.match(first.secret, /^[0-9a-f]+$/);
    const file = path.join(dir, 'secret');
    assert.ok(fs.existsSync(file), 'secret file written in the data dir');
    assert.equal(fs.readFileSync(file, 'utf8').trim(), first.secret);
    if (process.platform !== 'win32') {
      assert.equal(fs.statSync(file).mode & 0o077, 0, 'secret file is private to its owner');
    }

    const second = loadConfig({ CHORUS_DATA_DIR: dir });
    assert.equal(second.secret, first.secret, 'same secret on the second load');

    const elsewhere = loadConfig({ CHORUS_DATA_DIR: tempDir() });
    assert.notEqual(elsewhere.secret, first.secret, 'another data dir gets its own secret');
  });

  test('an explicit CHORUS_SECRET wins and writes nothing', () => {
    const dir = tempDir();
    const c = loadConfig({ CHORUS_DATA_DIR: dir, CHORUS_SECRET: 'z'.repeat(48) });
    assert.equal(c.secret, 'z'.repeat(48));
    assert.equal(fs.existsSync(path.join(dir, 'secret')), false);
  });
  test('MQTT_ADMIN_* is required with MQTT_URL only in the modes that dial the broker (full, dispatcher)', () => {
    const split = { DATABASE_URL: 'postgres://db/chorus', REDIS_URL: 'redis://kv:6379', MQTT_URL: 'mqtt://broker:1883' };
    for (const mode of ['full', 'dispatcher']) {
      refuses(env({ ...split, CHORUS_MODE: mode }), new RegExp(`MQTT_ADMIN_USERNAME and MQTT_ADMIN_PASSWORD .*CHORUS_MODE=${mode}`));
      const c = loadConfig(env({ ...split, CHORUS_MODE: mode, MQTT_ADMIN_USERNAME: 'admin', MQTT_ADMIN_PASSWORD: 'pw' }));
      assert.equal(c.mqttAdminUsername, 'admin');
      assert.equal(c.mqttAdminPassword, 'pw');
    }
    for (const mode of ['api', 'worker']) {
      const c = loadConfig(env({ ...split, CHORUS_MODE: mode }));
      assert.equal(c.mqttUrl, 'mqtt://broker:1883');
      assert.equal(c.mqttAdminUsername, null);
      // Given anyway (one environment file for every process), the superuser login is not kept where it is not used.
      const given = loadConfig(env({ ...split, CHORUS_MODE: mode, MQTT_ADMIN_USERNAME: 'admin', MQTT_ADMIN_PASSWORD: 'pw' }));
      assert.equal(given.mqttAdminUsername, null);
      assert.equal(given.mqttAdminPassword, null);
    }
  });

  test('CHORUS_MIGRATE on by default, off skips migrating at start; QUEUE_ATTEMPTS, QUEUE_BACKOFF_MS and QUEUE_LOCK_MS', () => {
    const c = loadConfig(env());
    assert.equal(c.migrate, true);
    assert.equal(c.queueAttempts, 3);
    assert.equal(c.queueBackoffMs, 1000);
    assert.equal(loadConfig(env({ CHORUS_MIGRATE: 'off' })).migrate, false);
    assert.equal(loadConfig(env({ CHORUS_MIGRATE: 'on' })).migrate, true);
    refuses(env({ CHORUS_MIGRATE: 'no' }), /CHORUS_MIGRATE must be one of on, off/);
    const q = loadConfig(env({ QUEUE_ATTEMPTS: '5', QUEUE_BACKOFF_MS: '20' }));
    assert.equal(q.queueAttempts, 5);
    assert.equal(q.queueBackoffMs, 20);
    refuses(env({ QUEUE_ATTEMPTS: '0' }), /QUEUE_ATTEMPTS must be between 1 and 50/);
    assert.equal(c.queueLockMs, 30_000);
    assert.equal(loadConfig(env({ QUEUE_LOCK_MS: '3000' })).queueLockMs, 3000);
    refuses(env({ QUEUE_LOCK_MS: '500' }), /QUEUE_LOCK_MS must be between 1000 and 3600000/);
  });

  test('SHUTDOWN_TIMEOUT_MS bounds draining at SIGTERM (20 s by default); the webhook delivery settings', () => {
    assert.equal(loadConfig(env()).shutdownTimeoutMs, 20_000);
    assert.equal(loadConfig(env({ SHUTDOWN_TIMEOUT_MS: '5000' })).shutdownTimeoutMs, 5000);
    refuses(env({ SHUTDOWN_TIMEOUT_MS: '10' }), /SHUTDOWN_TIMEOUT_MS must be between 1000 and 600000/);
    const a = loadConfig(env()).alerts;
    assert.deepEqual(a, { timeoutMs: 10_000, maxAttempts: 5, backoffMs: 2000, telegramApiUrl: 'https://api.telegram.org' });
    assert.equal(loadConfig(env()).outboundAllowHosts, '');
    assert.equal(loadConfig(env({ WEBHOOK_ALLOW_HOSTS: '10.0.0.0/8' })).outboundAllowHosts, '10.0.0.0/8');
    assert.equal(
      loadConfig(env({ OUTBOUND_ALLOW_HOSTS: 'mirror.lan', WEBHOOK_ALLOW_HOSTS: '10.0.0.0/8' })).outboundAllowHosts,
      'mirror.lan,10.0.0.0/8',
    );
    refuses(env({ OUTBOUND_ALLOW_HOSTS: '10.0.0.0/33' }), /OUTBOUND_ALLOW_HOSTS: "10\.0\.0\.0\/33" is not a valid CIDR/);
  });
});

/**
 * The command line, run as an operator runs it (see cli.test.ts): `admin` commands and what
 * `serve` then accepts, a bad configuration value, unknown commands and the usage.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cliFixture, root, TEST_TIMEOUT } from './helpers/cli-hub.ts';
import { logLines, logText } from './helpers/log-lines.ts';

describe('cli: admin, configuration, usage', { timeout: TEST_TIMEOUT * 3 }, () => {
  const { install, run, runOk, serve, login, stopCleanly, cleanup } = cliFixture();
  before(() => {
    assert.ok(fs.existsSync(path.join(root, 'node_modules', 'tsx')), 'tsx is installed');
  });
  after(() => cleanup());

  test('admin create-user, make-admin and reset-password change what serve then accepts', { timeout: TEST_TIMEOUT }, async () => {
    const inst = await install({}, { migrated: true });

    const created = await runOk(
      ['admin', 'create-user', '--email', 'ann@example.org', '--name', 'Ann Operator', '--password', 'ann-first-password'],
      inst.env,
    );
    assert.match(created, /^Created ann@example\.org \([0-9a-f-]{36}\)\n$/, 'a plain user, not an admin');

    const createdAdmin = await runOk(
      ['admin', 'create-user', '--email', 'boss@example.org', '--name', 'Boss', '--password', 'boss-password-1', '--admin'],
      inst.env,
    );
    assert.match(createdAdmin, /^Created boss@example\.org \([0-9a-f-]{36}\) as hub admin\n$/);

    const taken = await run(
      ['admin', 'create-user', '--email', 'ann@example.org', '--name', 'Ann Again', '--password', 'another-password'],
      inst.env,
    );
    assert.notEqual(taken.code, 0);
    assert.match(taken.stderr, /EMAIL_TAKEN: An account with this email exists/);

    const shortPw = await run(['admin', 'create-user', '--email', 'cy@example.org', '--password', 'x'], inst.env);
    assert.notEqual(shortPw.code, 0);
    assert.match(shortPw.stderr, /VALIDATION_FAILED: password must be/);

    const noEmail = await run(['admin', 'make-admin'], inst.env);
    assert.notEqual(noEmail.code, 0);
    assert.match(noEmail.stderr, /--email is required/);

    const unknownUser = await run(['admin', 'make-admin', '--email', 'ghost@example.org'], inst.env);
    assert.notEqual(unknownUser.code, 0);
    assert.match(unknownUser.stderr, /NOT_FOUND: No user with email ghost@example\.org/);

    const unknownReset = await run(['admin', 'reset-password', '--email', 'ghost@example.org'], inst.env);
    assert.notEqual(unknownReset.code, 0);
    assert.match(unknownReset.stderr, /NOT_FOUND/);

    const promoted = await runOk(['admin', 'make-admin', '--email', 'ann@example.org'], inst.env);
    assert.equal(promoted.trim(), 'ann@example.org is now a hub admin');

    const revoked = await runOk(['admin', 'make-admin', '--email', 'boss@example.org', '--revoke'], inst.env);
    assert.equal(revoked.trim(), 'boss@example.org is no longer a hub admin');

    const reset = await runOk(['admin', 'reset-password', '--email', 'ann@example.org'], inst.env);
    const generated = /^New password for ann@example\.org: (\S+)\n$/.exec(reset)?.[1];
    assert.ok(generated, `a generated password is printed: ${reset}`);
    assert.notEqual(generated, 'ann-first-password');

    const chosen = await runOk(['admin', 'reset-password', '--email', 'boss@example.org', '--password', 'boss-password-2'], inst.env);
    assert.equal(chosen.trim(), 'Password of boss@example.org changed');
    assert.doesNotMatch(chosen, /boss-password-2/, 'a chosen password is not echoed');

    const server = await serve(inst.env);
    try {
      // Ann is a hub admin, so the first start generated none.
      assert.doesNotMatch(server.banner, /First start|password /);
      const ann = await login(server.url, 'ann@example.org', generated);
      assert.equal(ann.status, 200, `the generated password works: ${ann.text}`);
      assert.equal(ann.body.user.name, 'Ann Operator');
      assert.equal(ann.body.user.isAdmin, true, 'make-admin took effect');
      const annOld = await login(server.url, 'ann@example.org', 'ann-first-password');
      assert.equal(annOld.status, 401, 'the old password no longer works');

      const boss = await login(server.url, 'boss@example.org', 'boss-password-2');
      assert.equal(boss.status, 200, boss.text);
      assert.equal(boss.body.user.isAdmin, false, 'make-admin --revoke took effect');
      assert.equal((await login(server.url, 'boss@example.org', 'boss-password-1')).status, 401);
    } finally {
      await stopCleanly(server);
    }
  });

  test('a bad configuration value exits non-zero with a clear message', { timeout: TEST_TIMEOUT }, async () => {
    const inst = await install();
    for (const command of [['serve'], ['migrate'], ['admin', 'make-admin', '--email', 'a@example.org']]) {
      const r = await run(command, { ...inst.env, PORT: 'abc' });
      assert.equal(r.code, 1, `${command.join(' ')} exits 1`);
      // The hub says it in its log (one JSON line, level fatal); a command in plain words on stderr.
      const said =
        command[0] === 'serve'
          ? logLines(r.stdout)
              .map((l) => `${l.level} ${l.msg}`)
              .join('\n')
          : r.stderr.trim();
      assert.equal(said, `${command[0] === 'serve' ? '60 ' : ''}Configuration error: PORT must be a whole number, got "abc"`);
      assert.doesNotMatch(r.stdout, /listening/);
    }
    const db = await run(['migrate'], { ...inst.env, DATABASE_URL: 'mysql://root:hunter2@localhost/chorus' });
    assert.equal(db.code, 1);
    assert.match(db.stderr, /^Configuration error: DATABASE_URL must use postgres: or postgresql:, got "mysql:"/);
    assert.doesNotMatch(db.stderr, /hunter2/);
    const pair = await run(['serve'], { ...inst.env, CHORUS_ADMIN_EMAIL: 'root@example.org' });
    assert.equal(pair.code, 1);
    assert.match(logText(pair.stdout), /^Configuration error: CHORUS_ADMIN_EMAIL and CHORUS_ADMIN_PASSWORD must be set together/);
  });

  test(
    'unknown commands fail with the usage; help prints it; bin/chorus.mjs passes exit codes through',
    { timeout: TEST_TIMEOUT },
    async () => {
      const inst = await install();
      const unknown = await run(['frobnicate'], inst.env);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /Unknown command "frobnicate"/);
      assert.match(unknown.stderr, /admin reset-password --email E/);

      const unknownAdmin = await run(['admin', 'explode', '--email', 'a@example.org'], inst.env);
      assert.equal(unknownAdmin.code, 1);
      assert.match(unknownAdmin.stderr, /Unknown admin command "explode"/);

      const help = await run(['help'], inst.env);
      assert.equal(help.code, 0);
      assert.match(help.stdout, /^chorus <command>/);

      const binHelp = await run(['--help'], inst.env, { viaBin: true });
      assert.equal(binHelp.code, 0);
      assert.match(binHelp.stdout, /migrate\s+apply database migrations and exit/);
      const binBad = await run(['serve'], { ...inst.env, PORT: 'abc' }, { viaBin: true });
      assert.equal(binBad.code, 1);
      // serve says it in its log (a JSON line on stdout).
      assert.match(logText(binBad.stdout), /^Configuration error: PORT/m);
    },
  );
});

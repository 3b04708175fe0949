/**
 * A hub's close waits for answers in flight, then lets go of their connections. After an upload
 * and a download, the download's keep-alive connection could turn idle a moment after the close
 * began, when Node had already closed the idle ones: it then held the close until its keep-alive
 * timeout (72 s), in about half the runs of the mobile-releases suite. The close now sweeps idle
 * connections until the server has closed (closeConnectionsAsTheyIdle in src/core/http.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startHub } from './helpers/hub.ts';
import { factories } from './helpers/factories.ts';

const MAX_BYTES = 64 * 1024;
const pkg = (size: number) => Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), crypto.randomBytes(size - 4)]);

// Without the sweep, four rounds meet the 72 s wait most times, and the test's timeout fails them.
test('a hub closes at once after an upload and a download, never at the keep-alive timeout', { timeout: 60_000 }, async () => {
  for (let round = 0; round < 4; round++) {
    const hub = await startHub({ env: { MOBILE_MAX_BYTES: String(MAX_BYTES) } });
    const admin = await factories(hub).user({ admin: true });
    const form = new FormData();
    form.set('version', `1.0.${round}`);
    form.set('file', new Blob([new Uint8Array(pkg(MAX_BYTES))]), 'bundle.aab');
    const up = await fetch(`${hub.url}/api/mobile/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin.token}` },
      body: form,
    });
    assert.equal(up.status, 201);
    const { id } = (await up.json()) as { id: string };
    const down = await fetch(`${hub.url}/api/mobile/download/${id}`);
    assert.equal(down.status, 200);
    assert.equal((await down.arrayBuffer()).byteLength, MAX_BYTES);
    await hub.close();
  }
});

test('a refusal sent before an upload was read closes its connection; other refusals keep it', async () => {
  const hub = await startHub({ env: { MOBILE_MAX_BYTES: String(MAX_BYTES) } });
  try {
    const member = await factories(hub).user();
    const form = new FormData();
    form.set('version', '1.0.0');
    form.set('file', new Blob([new Uint8Array(pkg(MAX_BYTES))]), 'bundle.aab');
    // Refused by the guard before the multipart body is read: the rest of it must not stay on the connection.
    const refused = await fetch(`${hub.url}/api/mobile/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.token}` },
      body: form,
    });
    assert.equal(refused.status, 403);
    assert.equal(refused.headers.get('connection'), 'close');
    await refused.arrayBuffer();
    // A refusal of a request without a body keeps the connection for the next request.
    const anonymous = await fetch(`${hub.url}/api/auth/me`);
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers.get('connection'), 'keep-alive');
    await anonymous.arrayBuffer();
  } finally {
    await hub.close();
  }
});

/**
 * Field notes over HTTP (issue 22): writing, editing and deleting with who may do which,
 * validation, filters, the photo (stored, streamed back, refused when not an image, gone with
 * its note), a satellite's deletion leaving its notes unlinked, and the audit entry.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories, makeSatellite, type TestUser } from './helpers/factories.ts';
import { assertError, client, type Credential } from './helpers/http.ts';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('rest of a small png image')]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(2048, 7)]);
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0, 0, 0, 0]), Buffer.from('WEBPVP8 '), Buffer.alloc(64, 1)]);

describe('field notes', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let f: ReturnType<typeof factories>;
  let w: Awaited<ReturnType<ReturnType<typeof factories>['world']>>;
  let otherMember: TestUser;
  let sat: { id: string; name: string; tenantId: string };

  before(async () => {
    hub = await startHub();
    api = client(hub.url);
    f = factories(hub);
    w = await f.world();
    otherMember = await f.member(w.team, 'member', { name: 'Oli Other' });
    sat = await makeSatellite(hub, w.team, w.member, 'Pond recorder');
  });
  after(() => hub.close());

  const write = (as: Credential, body: Record<string, unknown>) => api.post('/field-notes', { tenantId: w.team.id, ...body }, as);

  async function upload(as: Credential, id: string, bytes: Buffer, type: string, field = 'photo') {
    const form = new FormData();
    form.set(field, new Blob([new Uint8Array(bytes)], { type }), 'photo.bin');
    const res = await fetch(`${hub.url}/api/field-notes/${id}/photo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${as.token}` },
      body: form,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, text, headers: res.headers };
  }

  async function photoOf(as: Credential, id: string) {
    const res = await fetch(`${hub.url}/api/field-notes/${id}/photo`, { headers: { authorization: `Bearer ${as.token}` } });
    return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
  }

  test('a member writes a note; it answers with author, satellite and position, and at defaults to now', async () => {
    hub.clock.freeze(new Date('2026-06-10T12:00:00Z'));
    const res = await write(w.member, { text: '  Two herons at the pond  ', satelliteId: sat.id, latitude: 52.5, longitude: 13.4 });
    assert.equal(res.status, 201, res.text);
    const n = res.body;
    assert.equal(n.tenantId, w.team.id);
    assert.equal(n.authorId, w.member.id);
    assert.equal(n.authorName, 'Mel Member');
    assert.equal(n.text, 'Two herons at the pond');
    assert.equal(n.at, '2026-06-10T12:00:00.000Z', 'now by the hub clock');
    assert.equal(n.satelliteId, sat.id);
    assert.equal(n.satelliteName, 'Pond recorder');
    assert.equal(n.latitude, 52.5);
    assert.equal(n.longitude, 13.4);
    assert.equal(n.photoUrl, null);
    assert.equal(n.createdAt, n.updatedAt);
    const list = await api.get(`/field-notes?tenantId=${w.team.id}`, w.viewer);
    assert.equal(list.status, 200);
    assert.ok(list.body.notes.some((x: { id: string }) => x.id === n.id));
  });

  test('validation: text length, positions, both coordinates, the team satellite, the window', async () => {
    assertError(await write(w.member, { text: '' }), 400, 'VALIDATION_FAILED');
    assertError(await write(w.member, { text: '   ' }), 400, 'VALIDATION_FAILED');
    assertError(await write(w.member, { text: 'x'.repeat(5001) }), 400, 'VALIDATION_FAILED');
    assert.equal((await write(w.member, { text: 'x'.repeat(5000) })).status, 201);
    assertError(await write(w.member, { text: 'a', latitude: 91, longitude: 0 }), 400, 'VALIDATION_FAILED');
    assertError(await write(w.member, { text: 'a', latitude: 0, longitude: -181 }), 400, 'VALIDATION_FAILED');
    assertError(await write(w.member, { text: 'a', latitude: 10 }), 400, 'VALIDATION_FAILED');
    assertError(await write(w.member, { text: 'a', at: 'yesterday' }), 400, 'VALIDATION_FAILED');
    assertError(await write(w.member, { text: 'a', extra: 1 }), 400, 'VALIDATION_FAILED');
    const foreign = await makeSatellite(hub, w.otherTeam, w.otherOwner);
    assertError(await write(w.member, { text: 'a', satelliteId: foreign.id }), 400, 'UNKNOWN_SATELLITE');
    assertError(await write(w.member, { text: 'a', satelliteId: '00000000-0000-4000-8000-000000000000' }), 400, 'UNKNOWN_SATELLITE');
    const q = `/field-notes?tenantId=${w.team.id}&from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z`;
    assertError(await api.get(q, w.viewer), 400, 'VALIDATION_FAILED');
  });

  test('who may do what: viewer reads only, others edit only their own, admins delete any, another team sees nothing', async () => {
    const mine = (await write(w.member, { text: 'mine' })).body;
    assertError(await write(w.viewer, { text: 'viewer note' }), 403, 'FORBIDDEN');
    assertError(await write(w.key, { text: 'key note' }), 403, 'FORBIDDEN');
    assertError(await write(f.internal, { text: 'internal note' }), 403, 'PERSON_REQUIRED');
    assert.equal((await api.get(`/field-notes?tenantId=${w.team.id}`, w.key)).status, 200, 'a key reads');

    // Edit: the author only.
    const edited = await api.put(`/field-notes/${mine.id}`, { text: 'mine, edited', at: '2026-05-01T06:00:00.000Z' }, w.member);
    assert.equal(edited.status, 200, edited.text);
    assert.equal(edited.body.text, 'mine, edited');
    assert.equal(edited.body.at, '2026-05-01T06:00:00.000Z');
    assertError(await api.put(`/field-notes/${mine.id}`, { text: 'not yours' }, otherMember), 403, 'NOT_AUTHOR');
    assertError(await api.put(`/field-notes/${mine.id}`, { text: 'not yours' }, w.admin), 403, 'NOT_AUTHOR');
    assertError(await api.put(`/field-notes/${mine.id}`, { text: 'viewer' }, w.viewer), 403, 'FORBIDDEN');
    assertError(await api.put(`/field-notes/${mine.id}`, { text: 'other team' }, w.otherOwner), 404, 'NOT_FOUND');
    // PUT keeps `at` when left out and clears what else is left out.
    const kept = await api.put(`/field-notes/${mine.id}`, { text: 'again', satelliteId: sat.id }, w.member);
    assert.equal(kept.body.at, '2026-05-01T06:00:00.000Z');
    assert.equal(kept.body.satelliteId, sat.id);
    assert.equal((await api.put(`/field-notes/${mine.id}`, { text: 'again' }, w.member)).body.satelliteId, null);

    // Delete: the author, or an admin; not another member, a viewer or another team.
    assertError(await api.del(`/field-notes/${mine.id}`, otherMember), 403, 'NOT_AUTHOR');
    assertError(await api.del(`/field-notes/${mine.id}`, w.viewer), 403, 'FORBIDDEN');
    assertError(await api.del(`/field-notes/${mine.id}`, w.otherOwner), 404, 'NOT_FOUND');
    assertError(await api.get(`/field-notes/${mine.id}/photo`, w.otherOwner), 404, 'NOT_FOUND');
    assertError(await api.get(`/field-notes?tenantId=${w.team.id}`, w.otherOwner), 404, 'NOT_FOUND');
    assert.equal((await api.del(`/field-notes/${mine.id}`, w.member)).status, 204);
    assertError(await api.del(`/field-notes/${mine.id}`, w.member), 404, 'NOT_FOUND');

    const theirs = (await write(otherMember, { text: 'to be removed by an admin' })).body;
    assert.equal((await api.del(`/field-notes/${theirs.id}`, w.admin)).status, 204);
    const listed = (await api.get(`/field-notes?tenantId=${w.team.id}&limit=200`, w.viewer)).body.notes.map((n: { id: string }) => n.id);
    assert.ok(!listed.includes(mine.id) && !listed.includes(theirs.id));
  });

  test('the deletion is audited with author, satellite and text length, never the text', async () => {
    const n = (await write(otherMember, { text: 'Private thought at the pond', satelliteId: sat.id })).body;
    assert.equal((await api.del(`/field-notes/${n.id}`, w.owner)).status, 204);
    const [row] = await hub.sql.query<any>(
      `SELECT actor_user_id AS "actor", tenant_id AS "tenantId", target_type AS "targetType", details FROM audit_log
       WHERE action = 'field_note.deleted' AND target_id = $1`,
      [n.id],
    );
    assert.equal(row.actor, w.owner.id);
    assert.equal(row.tenantId, w.team.id);
    assert.equal(row.targetType, 'field_note');
    assert.deepEqual(row.details, {
      own: false,
      authorId: otherMember.id,
      authorName: 'Oli Other',
      satelliteId: sat.id,
      satelliteName: 'Pond recorder',
      at: n.at,
      textLength: 'Private thought at the pond'.length,
      photo: false,
    });
    assert.doesNotMatch(JSON.stringify(row.details), /Private thought/);
  });

  test('filters: by satellite and by window, newest first, with total and paging', async () => {
    const t = await f.team(await f.user());
    const m = await f.member(t, 'member');
    const a = await makeSatellite(hub, t, m, 'A');
    const b = await makeSatellite(hub, t, m, 'B');
    const post = (body: Record<string, unknown>) => api.post('/field-notes', { tenantId: t.id, ...body }, m);
    const at = (h: number) => `2026-06-01T${String(h).padStart(2, '0')}:00:00.000Z`;
    for (const [h, s] of [
      [5, a.id],
      [6, b.id],
      [7, a.id],
      [8, undefined],
      [9, a.id],
    ] as const) {
      assert.equal((await post({ text: `at ${h}`, at: at(h), satelliteId: s })).status, 201);
    }
    const list = (q: string) => api.get(`/field-notes?tenantId=${t.id}${q}`, m).then((r) => r.body);
    const all = await list('');
    assert.equal(all.total, 5);
    assert.deepEqual(
      all.notes.map((n: { text: string }) => n.text),
      ['at 9', 'at 8', 'at 7', 'at 6', 'at 5'],
    );
    const ofA = await list(`&satelliteId=${a.id}`);
    assert.equal(ofA.total, 3);
    assert.deepEqual(
      ofA.notes.map((n: { text: string }) => n.text),
      ['at 9', 'at 7', 'at 5'],
    );
    const win = await list(`&from=${at(6)}&to=${at(9)}`);
    assert.deepEqual(
      win.notes.map((n: { text: string }) => n.text),
      ['at 8', 'at 7', 'at 6'],
      'from inclusive, to exclusive',
    );
    const both = await list(`&satelliteId=${a.id}&from=${at(6)}&to=${at(9)}`);
    assert.deepEqual(
      both.notes.map((n: { text: string }) => n.text),
      ['at 7'],
    );
    const page = await list('&limit=2&offset=1');
    assert.equal(page.total, 5);
    assert.deepEqual(
      page.notes.map((n: { text: string }) => n.text),
      ['at 8', 'at 7'],
    );
    // Another team's notes never show.
    assert.equal((await api.get(`/field-notes?tenantId=${w.team.id}&satelliteId=${a.id}`, w.member)).body.total, 0);
  });

  test('photo: the author uploads, viewers read the same bytes with their type; wrong types refused; replaced and deleted without leftovers', async () => {
    const n = (await write(w.member, { text: 'with a photo' })).body;
    const up = await upload(w.member, n.id, PNG, 'image/png');
    assert.equal(up.status, 200, up.text);
    assert.equal(up.body.photoUrl, `/api/field-notes/${n.id}/photo`);
    const pngKey = `notes/${w.team.id}/${n.id}.png`;
    assert.ok(await hub.infra.storage.stat(pngKey), 'stored under notes/{team}/{id}.{ext}');
    const read = await photoOf(w.viewer, n.id);
    assert.equal(read.status, 200);
    assert.equal(read.type, 'image/png');
    assert.ok(read.body.equals(PNG), 'the same bytes');

    // Refused: not an image by its bytes, a declared type not allowed, another field, someone else, a viewer, not multipart.
    assertError(await upload(w.member, n.id, Buffer.from('GIF89a not allowed'), 'image/png'), 400, 'INVALID_PHOTO');
    assertError(await upload(w.member, n.id, PNG, 'image/gif'), 400, 'INVALID_PHOTO');
    assertError(await upload(w.member, n.id, Buffer.from('<svg/>'), 'image/svg+xml'), 400, 'INVALID_PHOTO');
    assertError(await upload(w.member, n.id, PNG, 'image/png', 'file'), 400, 'BAD_REQUEST');
    assertError(await upload(otherMember, n.id, PNG, 'image/png'), 403, 'NOT_AUTHOR');
    assertError(await upload(w.admin, n.id, PNG, 'image/png'), 403, 'NOT_AUTHOR');
    assertError(await upload(w.viewer, n.id, PNG, 'image/png'), 403, 'FORBIDDEN');
    assertError(await api.post(`/field-notes/${n.id}/photo`, { photo: 'x' }, w.member), 415, 'UNSUPPORTED_MEDIA_TYPE');
    assert.ok((await photoOf(w.viewer, n.id)).body.equals(PNG), 'refused uploads leave the photo alone');

    // Replaced by a JPEG: the PNG object goes.
    assert.equal((await upload(w.member, n.id, JPEG, 'image/jpeg')).status, 200);
    assert.equal(await hub.infra.storage.stat(pngKey), null, 'the old object is gone');
    const jpegKey = `notes/${w.team.id}/${n.id}.jpg`;
    const jpeg = await photoOf(w.member, n.id);
    assert.equal(jpeg.type, 'image/jpeg');
    assert.ok(jpeg.body.equals(JPEG));

    // WebP is accepted too (another note).
    const n2 = (await write(w.member, { text: 'webp' })).body;
    assert.equal((await upload(w.member, n2.id, WEBP, 'image/webp')).status, 200);
    assert.equal((await photoOf(w.member, n2.id)).type, 'image/webp');

    // Deleting the note deletes the photo.
    assert.equal((await api.del(`/field-notes/${n.id}`, w.admin)).status, 204);
    assert.equal(await hub.infra.storage.stat(jpegKey), null, 'no leftover object');
    assertError(await api.get(`/field-notes/${n.id}/photo`, w.viewer), 404, 'NOT_FOUND');
  });

  test('a photo larger than 10 MB is refused with 413 and nothing stored; a note without a photo answers NO_PHOTO', async () => {
    const n = (await write(w.member, { text: 'big photo' })).body;
    const big = Buffer.concat([JPEG, Buffer.alloc(10 * 1024 * 1024)]);
    assertError(await upload(w.member, n.id, big, 'image/jpeg'), 413, 'PAYLOAD_TOO_LARGE');
    assert.equal(await hub.infra.storage.stat(`notes/${w.team.id}/${n.id}.jpg`), null);
    assertError(await api.get(`/field-notes/${n.id}/photo`, w.viewer), 404, 'NO_PHOTO');
  });

  test("a satellite's deletion unlinks its notes, keeping its name, and the preview counts them", async () => {
    const doomed = await makeSatellite(hub, w.team, w.member, 'Doomed');
    const n1 = (await write(w.member, { text: 'one', satelliteId: doomed.id })).body;
    const n2 = (await write(otherMember, { text: 'two', satelliteId: doomed.id })).body;
    assert.equal(n1.satelliteName, 'Doomed');
    const preview = await api.get(`/satellites/${doomed.id}/deletion-preview`, w.viewer);
    assert.equal(preview.body.fieldNotes, 2);
    // A rename after writing: the notes show the current name, and keep that one when the satellite goes.
    assert.equal((await api.patch(`/satellites/${doomed.id}`, { name: 'Renamed' }, w.admin)).status, 200);
    assert.equal((await api.del(`/satellites/${doomed.id}`, w.admin, { confirmName: 'Renamed' })).status, 204);
    const list = (await api.get(`/field-notes?tenantId=${w.team.id}&limit=200`, w.viewer)).body.notes;
    for (const id of [n1.id, n2.id]) {
      const n = list.find((x: { id: string }) => x.id === id);
      assert.ok(n, 'the note stays');
      assert.equal(n.satelliteId, null);
      assert.equal(n.satelliteName, 'Renamed');
    }
    const [audit] = await hub.sql.query<any>(`SELECT details FROM audit_log WHERE action = 'admin.satellite_deleted' AND target_id = $1`, [
      doomed.id,
    ]);
    assert.equal(audit.details.fieldNotes, 2);
  });
});

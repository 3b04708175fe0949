/**
 * The three upload routes (a model, a mobile release, a field note's photo) read multipart
 * through one reader (src/core/upload.ts): a body that is not multipart, a malformed body, an
 * oversize file, a missing or unknown file field get the same answer on each, with the route's
 * own code only where the file is missing.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startHub, type Hub } from './helpers/hub.ts';
import { factories } from './helpers/factories.ts';
import { assertError, client, type Credential, type Res } from './helpers/http.ts';

const MOBILE_MAX_BYTES = 64 * 1024;
const ZIP = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);

interface FilePart {
  field: string;
  bytes: Buffer;
  filename: string;
  type?: string;
}

interface UploadRoute {
  name: string;
  url: () => string;
  as: () => Credential;
  fields: Record<string, string>;
  /** The route's file, small and of the right kind. */
  file: FilePart;
  /** Other files the route needs besides `file`. */
  others: FilePart[];
  /** A file one byte past its limit. */
  oversize: FilePart;
  /** The route's code for a missing file. */
  missing: string;
}

describe('uploads: one reader, the same refusals on every upload route', () => {
  let hub: Hub;
  let api: ReturnType<typeof client>;
  let hubAdmin: Credential;
  let member: Credential;
  let noteId: string;

  before(async () => {
    hub = await startHub({ env: { MOBILE_MAX_BYTES: String(MOBILE_MAX_BYTES) } });
    api = client(hub.url);
    const w = await factories(hub).world();
    hubAdmin = w.hubAdmin;
    member = w.member;
    const note = await api.post('/field-notes', { tenantId: w.team.id, text: 'a note for a photo' }, member);
    assert.equal(note.status, 201, note.text);
    noteId = note.body.id;
  });
  after(() => hub.close());

  const routes: UploadRoute[] = [
    {
      name: 'POST /admin/models',
      url: () => '/api/admin/models',
      as: () => hubAdmin,
      fields: { name: 'a model' },
      file: { field: 'model', bytes: Buffer.from('onnx bytes'), filename: 'model.onnx' },
      others: [{ field: 'labels', bytes: Buffer.from('A a_B\n'), filename: 'labels.txt' }],
      oversize: { field: 'labels', bytes: Buffer.alloc(4 * 1024 * 1024 + 1, 'a'), filename: 'labels.txt' },
      missing: 'INVALID_MODEL',
    },
    {
      name: 'POST /mobile/upload',
      url: () => '/api/mobile/upload',
      as: () => hubAdmin,
      fields: { version: '1.0.0' },
      file: { field: 'file', bytes: Buffer.concat([ZIP, Buffer.alloc(100)]), filename: 'app.apk' },
      others: [],
      oversize: { field: 'file', bytes: Buffer.concat([ZIP, Buffer.alloc(MOBILE_MAX_BYTES - ZIP.length + 1)]), filename: 'app.apk' },
      missing: 'INVALID_PACKAGE',
    },
    {
      name: 'POST /field-notes/:id/photo',
      url: () => `/api/field-notes/${noteId}/photo`,
      as: () => member,
      fields: {},
      file: { field: 'photo', bytes: PNG, filename: 'photo.png', type: 'image/png' },
      others: [],
      oversize: {
        field: 'photo',
        bytes: Buffer.concat([PNG, Buffer.alloc(10 * 1024 * 1024 - PNG.length + 1)]),
        filename: 'p.png',
        type: 'image/png',
      },
      missing: 'INVALID_PHOTO',
    },
  ];

  async function send(route: UploadRoute, body: BodyInit, contentType?: string): Promise<Res> {
    const headers: Record<string, string> = { authorization: `Bearer ${route.as().token}` };
    if (contentType) headers['content-type'] = contentType;
    const res = await fetch(hub.url + route.url(), { method: 'POST', headers, body });
    const text = await res.text();
    const json = (res.headers.get('content-type') ?? '').includes('application/json') && text ? JSON.parse(text) : text;
    return { status: res.status, body: json, headers: res.headers, text };
  }

  function form(route: UploadRoute, files: FilePart[], fields = route.fields): FormData {
    const f = new FormData();
    for (const [k, v] of Object.entries(fields)) f.set(k, v);
    for (const p of files) f.set(p.field, new Blob([new Uint8Array(p.bytes)], p.type ? { type: p.type } : {}), p.filename);
    return f;
  }

  const BOUNDARY = 'chorus-test-boundary';
  const cutShort = (route: UploadRoute) =>
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${route.file.field}"; filename="${route.file.filename}"\r\n` +
        `Content-Type: ${route.file.type ?? 'application/octet-stream'}\r\n\r\nthe body ends before its closing boundary`,
    );

  for (const route of routes) {
    describe(route.name, () => {
      test('a malformed multipart body is refused with 400 BAD_REQUEST, "The multipart body cannot be read"', async () => {
        const malformed: [string, BodyInit, string][] = [
          ['no parts at all', 'this is not multipart', `multipart/form-data; boundary=${BOUNDARY}`],
          ['no boundary', `--${BOUNDARY}\r\n\r\n--${BOUNDARY}--\r\n`, 'multipart/form-data'],
          ['a part cut short', new Uint8Array(cutShort(route)), `multipart/form-data; boundary=${BOUNDARY}`],
        ];
        for (const [what, body, type] of malformed) {
          const err = assertError(await send(route, body, type), 400, 'BAD_REQUEST');
          assert.equal(err.message, 'The multipart body cannot be read', what);
        }
      });

      test('a body that is not multipart is refused with 415 UNSUPPORTED_MEDIA_TYPE', async () => {
        const err = assertError(await send(route, JSON.stringify(route.fields), 'application/json'), 415, 'UNSUPPORTED_MEDIA_TYPE');
        assert.match(err.message, new RegExp(`multipart/form-data with .*"${route.file.field}"`));
      });

      test('a file one byte past its limit is refused with 413 PAYLOAD_TOO_LARGE', async () => {
        const files = [route.file, ...route.others].filter((p) => p.field !== route.oversize.field).concat(route.oversize);
        const err = assertError(await send(route, form(route, files)), 413, 'PAYLOAD_TOO_LARGE');
        assert.match(err.message, new RegExp(`"${route.oversize.field}" is larger than \\d+ bytes|larger than \\d+ bytes`));
      });

      test("a missing or empty file is refused with 400 and the route's code", async () => {
        assertError(await send(route, form(route, route.others)), 400, route.missing);
        assertError(await send(route, form(route, [{ ...route.file, bytes: Buffer.alloc(0) }, ...route.others])), 400, route.missing);
      });

      test('an unknown file field or text field is refused with 400 BAD_REQUEST, naming it', async () => {
        const stray = { field: 'attachment', bytes: Buffer.from('x'), filename: 'x.bin' };
        const unknownFile = assertError(await send(route, form(route, [route.file, ...route.others, stray])), 400, 'BAD_REQUEST');
        assert.match(unknownFile.message, /"attachment"/);
        const unknownField = assertError(
          await send(route, form(route, [route.file, ...route.others], { ...route.fields, colour: 'red' })),
          400,
          'BAD_REQUEST',
        );
        assert.match(unknownField.message, /"colour"/);
      });
    });
  }

  test('refused mobile uploads leave no temp file behind', () => {
    const tmp = path.join(hub.infra.config.dataDir, 'tmp');
    assert.deepEqual(fs.existsSync(tmp) ? fs.readdirSync(tmp) : [], []);
  });
});

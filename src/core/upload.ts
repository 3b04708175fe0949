/**
 * The one reader of multipart uploads. A route declares the files it takes (each required,
 * each with its size limit, buffered or handed to a receiver as a stream) and the text fields
 * it allows; the reader answers the typed fields and the files, or refuses with the one error
 * shape:
 *
 * - 415 UNSUPPORTED_MEDIA_TYPE when the body is not multipart/form-data;
 * - 400 BAD_REQUEST for a body that cannot be read as multipart, an unknown field or file
 *   field, a file sent twice, too many parts, a field longer than its limit;
 * - 413 PAYLOAD_TOO_LARGE for a file larger than its limit;
 * - 400 with the route's own code (and message) for a missing or empty file;
 * - whatever a file's check, its receiver or the fields' reader throws.
 *
 * Whatever was received is discarded on any refusal, so a refused upload leaves nothing behind.
 */
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { Multipart, MultipartFile } from '@fastify/multipart';
import { AppError, badRequest, payloadTooLarge, unsupportedMediaType } from './errors.ts';

/** What the reader knows of a file part before its bytes are read. */
export interface UploadPart {
  filename: string;
  mimetype: string;
}

interface FileRule {
  /** The largest file accepted, in bytes. */
  maxBytes: number;
  /** The refusal (400, the route's code) when the file is left out or empty. */
  missing: { code: string; message: string };
  /** Refuses the part by its name or declared type (throws), before a byte is read. */
  check?: (part: UploadPart) => void;
}

/** A file read into memory: the route gets its bytes. */
export interface BufferedFile extends FileRule {
  receive?: undefined;
}

/**
 * A file handed over as a stream (to a temp file, say): the route gets what `receive` answers.
 * The stream carries at most `maxBytes + 1` bytes, so the receiver can tell an oversize file by
 * its count; the reader refuses it in any case, after `discard` of what was received.
 */
export interface StreamedFile<T> extends FileRule {
  receive(stream: Readable, part: UploadPart): Promise<T>;
  discard(received: T): Promise<void>;
}

type FileRules = Record<string, BufferedFile | StreamedFile<unknown>>;

type Received<R> = R extends { receive(...args: never[]): Promise<infer T> } ? T : Buffer;

export interface UploadRules<Files extends FileRules, Name extends string, Fields> {
  files: Files;
  /** The text fields allowed, each at most `maxBytes`; `read` checks them and answers their typed form. */
  fields?: { names: readonly Name[]; maxBytes: number; read(raw: Partial<Record<Name, string>>): Fields };
}

export interface Upload<Files extends FileRules, Fields> {
  files: { [K in keyof Files]: Received<Files[K]> };
  fields: Fields;
}

const quoted = (names: string[]) => names.map((n) => `"${n}"`).join(', ');

function unreadable(): AppError {
  return badRequest('The multipart body cannot be read');
}

/** A failure of the multipart parser, as the answer the client gets. */
function parserRefusal(err: unknown, expected: string): AppError {
  if (err instanceof AppError) return err;
  const code = (err as { code?: unknown }).code;
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT')
    return badRequest(`Too many parts: send ${expected}`);
  if (code === 'FST_REQ_FILE_TOO_LARGE') return payloadTooLarge('A file is larger than this upload accepts');
  if (code === 'FST_PROTO_VIOLATION') return badRequest(`Unknown field: send ${expected}`);
  // Everything else the parser throws is about the body the client sent: no boundary, a
  // malformed part, a body that ends early, a JSON field that is not JSON.
  return unreadable();
}

/** Reads a multipart upload by the route's rules; see the file comment for its answers. */
export async function readUpload<Files extends FileRules, Name extends string = never, Fields = undefined>(
  req: FastifyRequest,
  rules: UploadRules<Files, Name, Fields>,
): Promise<Upload<Files, Fields>> {
  const fileNames = Object.keys(rules.files);
  const fieldNames: readonly string[] = rules.fields?.names ?? [];
  const expected = [
    `the file${fileNames.length > 1 ? 's' : ''} ${quoted(fileNames)}`,
    ...(fieldNames.length ? [`the fields ${quoted([...fieldNames])}`] : []),
  ].join(' and ');
  if (!req.isMultipart()) throw unsupportedMediaType(`Send this as multipart/form-data with ${expected}`);

  const largest = Math.max(...Object.values(rules.files).map((f) => f.maxBytes));
  const parts = req.parts({
    limits: {
      // One byte past the largest limit tells an oversize file from one exactly at its limit; one
      // part past the declared ones lets a stray part be named ("Unknown field ...").
      fileSize: largest + 1,
      files: fileNames.length + 1,
      fields: fieldNames.length + 1,
      fieldSize: rules.fields?.maxBytes,
      parts: fileNames.length + fieldNames.length + 1,
    },
  });
  const received = new Map<string, { rule: BufferedFile | StreamedFile<unknown>; value: unknown }>();
  const raw: Record<string, string> = {};
  try {
    for (;;) {
      let next: IteratorResult<Multipart>;
      try {
        next = await parts.next();
      } catch (err) {
        throw parserRefusal(err, expected);
      }
      if (next.done) break;
      const part = next.value;
      if (part.type === 'field') {
        if (!fieldNames.includes(part.fieldname)) throw badRequest(`Unknown field "${part.fieldname}": send ${expected}`);
        if (part.valueTruncated) throw badRequest(`The field "${part.fieldname}" is longer than ${rules.fields?.maxBytes} bytes`);
        raw[part.fieldname] = String(part.value);
        continue;
      }
      const rule = Object.hasOwn(rules.files, part.fieldname) ? rules.files[part.fieldname] : undefined;
      try {
        if (!rule) throw badRequest(`Unknown file field "${part.fieldname}": send ${expected}`);
        if (received.has(part.fieldname)) throw badRequest(`The file "${part.fieldname}" is sent twice`);
        rule.check?.({ filename: part.filename, mimetype: part.mimetype });
      } catch (err) {
        part.file.resume();
        throw err;
      }
      received.set(part.fieldname, { rule, value: await receiveFile(rule, part) });
    }
    for (const [name, rule] of Object.entries(rules.files)) {
      if (!received.has(name)) throw badRequest(rule.missing.message, rule.missing.code);
    }
    // Without declared fields the reader answers none; Fields is then `undefined` by its default.
    const fields = (rules.fields ? rules.fields.read(raw as Partial<Record<Name, string>>) : undefined) as Fields;
    const files = Object.fromEntries([...received].map(([name, r]) => [name, r.value])) as Upload<Files, Fields>['files'];
    return { files, fields };
  } catch (err) {
    await Promise.all([...received.values()].map(({ rule, value }) => rule.receive && rule.discard(value)));
    throw err;
  }
}

/** One file part: buffered or handed to its receiver, then held against its limit and for emptiness. */
async function receiveFile(rule: BufferedFile | StreamedFile<unknown>, part: MultipartFile): Promise<unknown> {
  const { file } = part;
  let value: unknown;
  if (rule.receive) {
    try {
      value = await rule.receive(file, { filename: part.filename, mimetype: part.mimetype });
    } catch (err) {
      if (!file.destroyed) file.resume();
      // A stream that failed under the receiver failed on the body the client sent.
      throw file.errored && !(err instanceof AppError) ? unreadable() : err;
    }
  } else {
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      // Past the limit the rest is read and dropped, so the refusal comes after the whole body.
      for await (const chunk of file as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size <= rule.maxBytes) chunks.push(chunk);
      }
    } catch {
      throw unreadable();
    }
    value = Buffer.concat(chunks);
  }
  const refusal =
    file.truncated || file.bytesRead > rule.maxBytes
      ? payloadTooLarge(`The file "${part.fieldname}" is larger than ${rule.maxBytes} bytes`)
      : file.bytesRead === 0
        ? badRequest(rule.missing.message, rule.missing.code)
        : null;
  if (refusal) {
    if (rule.receive) await rule.discard(value);
    throw refusal;
  }
  return value;
}

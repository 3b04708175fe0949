/**
 * The framework's floor for the images bench: a bare Fastify in its own process answering every
 * GET with the same body, type and security headers as the hub's cached square, and nothing else
 * (no sign-in, no hooks, no metrics). Run by bench/images.ts as
 * `node --import tsx bench/bare-fastify.ts <body file>`; prints its port on stdout.
 */
import fs from 'node:fs';
import crypto from 'node:crypto';
import Fastify from 'fastify';
import { registerSecurityHeaders } from '../src/core/security-headers.ts';

const body = fs.readFileSync(process.argv[2]);
const etag = `"${crypto.createHash('sha1').update(body).digest('base64url')}"`;
const app = Fastify({ logger: false, genReqId: () => crypto.randomUUID() });
await registerSecurityHeaders(app, { publicUrl: 'http://127.0.0.1', docsPrefix: '/api/docs' });
app.get('/', (req, reply) => {
  reply
    .header('x-request-id', req.id)
    .header('content-type', 'image/jpeg')
    .header('cache-control', 'private, max-age=604800')
    .header('etag', etag)
    .send(body);
});
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);

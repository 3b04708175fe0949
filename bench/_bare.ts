import Fastify from 'fastify';
import crypto from 'node:crypto';
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
const on = (k: string) => (process.env.PARTS ?? '').split(',').includes(k);
if (process.argv[2] === 'serve') {
  const app = Fastify({ genReqId: () => crypto.randomUUID(), ...(on('trust') ? { trustProxy: () => false } : {}) });
  const { helmetHeaders, DASHBOARD_CSP } = await import('../src/core/security-headers.ts');
  const h = helmetHeaders({ contentSecurityPolicy: { useDefaults: false, directives: DASHBOARD_CSP }, frameguard: { action: 'deny' } });
  app.addHook('onRequest', (req, reply, done) => { reply.headers(h); reply.header('x-request-id', req.id); done(); });
  if (on('cookie')) await app.register((await import('@fastify/cookie')).default);
  if (on('multipart')) await app.register((await import('@fastify/multipart')).default);
  if (on('ws')) await app.register((await import('@fastify/websocket')).default);
  if (on('swagger')) await app.register((await import('@fastify/swagger')).default, { openapi: { info: { title: 'x', version: '1' } } });
  if (on('asynchooks')) {
    app.addHook('onRequest', async () => {});
    app.addHook('onSend', async (_r, _p, payload) => payload);
    app.addHook('onResponse', async () => {});
    app.addHook('preValidation', async () => {});
  }
  const schema = on('schema') ? { response: { 200: { type: 'object', properties: { status: { type: 'string' }, version: { type: 'string' }, timestamp: { type: 'string' } } } } } : {};
  app.get('/x', { schema }, async () => ({ status: 'ok', version: '0.1.0', timestamp: new Date().toISOString() }));
  await app.listen({ port: 18123, host: '127.0.0.1' });
} else {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/_bare.ts', 'serve'], { stdio: 'inherit', env: process.env });
  await new Promise((r) => setTimeout(r, 3000));
  await autocannon({ url: 'http://127.0.0.1:18123/x', connections: 100, duration: 2 });
  const r = await autocannon({ url: 'http://127.0.0.1:18123/x', connections: 100, duration: 6 });
  console.log(process.env.PARTS, r.requests.average, 'req/s p99', r.latency.p99);
  child.kill();
}

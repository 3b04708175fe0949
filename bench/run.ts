/** `npm run bench -- <name>`: runs one benchmark and prints its figures. */
const benches: Record<string, () => Promise<unknown>> = {
  auth: () => import('./auth.ts').then((m) => m.run()),
  ingest: () => import('./ingest.ts').then((m) => m.run()),
  fleet: () => import('./fleet.ts').then((m) => m.run()),
  inference: () => import('./inference.ts').then((m) => m.run()),
  'inference-birdnet': () => import('./inference-birdnet.ts').then((m) => m.run()),
  detections: () => import('./detections.ts').then((m) => m.run()),
  alerts: () => import('./alerts.ts').then((m) => m.run()),
  exports: () => import('./exports.ts').then((m) => m.run()),
  recovery: () => import('./recovery.ts').then((m) => m.run()),
  outage: () => import('./outage.ts').then((m) => m.run()),
  images: () => import('./images.ts').then((m) => m.run()),
  'model-confidence': () => import('./model-confidence.ts').then((m) => m.run()),
  stats: () => import('./stats.ts').then((m) => m.run()),
  similarity: () => import('./similarity.ts').then((m) => m.run()),
  chaos: () => import('./chaos.ts').then((m) => m.run()),
  'ingest-sql': () => import('./ingest-sql.ts').then((m) => m.run()),
};

const name = process.argv[2];
if (!name || !benches[name]) {
  console.error(`usage: npm run bench -- <${Object.keys(benches).join('|')}>`);
  process.exit(2);
}
await benches[name]();

// The embedded database on its own thread (src/infra/db/pglite.ts is the other side). PGlite runs
// PostgreSQL compiled to WebAssembly: every statement is CPU work on the thread that calls it, so
// here it leaves the hub's main thread free for MQTT, HTTP and WebSocket traffic.
// Plain JavaScript so the thread starts without the TypeScript loader.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
// pgvector, for search by sound (migration 0035): loaded always, so a data dir that has the
// extension (every migrated one) opens, dumped or not.
import { vector } from '@electric-sql/pglite-pgvector';

const parsers = { 20: (v) => Number(v), 1700: (v) => Number(v) };

/** Open transactions by id: the Transaction object, and how to end its callback. */
const txs = new Map();
let nextTx = 1;

/** PGlite's errors carry PostgreSQL's fields (code 23505 …); they cross the thread as plain data. */
function errorData(e) {
  const out = { message: String(e?.message ?? e) };
  for (const k of ['code', 'detail', 'hint', 'constraint', 'table', 'column', 'schema', 'severity', 'position', 'where']) {
    if (e && e[k] !== undefined) out[k] = e[k];
  }
  return out;
}

/** Rollback is asked for by throwing this out of the transaction callback. */
const ROLLBACK = Symbol('rollback');

function begin(pglite) {
  const id = nextTx++;
  return new Promise((resolveBegin, rejectBegin) => {
    let end;
    const ended = new Promise((resolve) => (end = resolve));
    const entry = { t: null, end, done: null };
    entry.done = pglite
      .transaction(async (t) => {
        entry.t = t;
        txs.set(id, entry);
        resolveBegin(id);
        if ((await ended) === 'rollback') throw ROLLBACK;
      })
      .then(
        () => null,
        (e) => {
          if (!txs.has(id)) rejectBegin(e); // BEGIN itself failed
          return e === ROLLBACK ? null : e;
        },
      )
      .finally(() => txs.delete(id));
  });
}

async function finish(id, how) {
  const entry = txs.get(id);
  if (!entry) throw new Error(`no open transaction ${id}`);
  entry.end(how);
  const err = await entry.done;
  if (err) throw err;
}

const target = (pglite, tx) => {
  if (tx === undefined || tx === null) return pglite;
  const entry = txs.get(tx);
  if (!entry) throw new Error(`no open transaction ${tx}`);
  return entry.t;
};

async function handle(pglite, m) {
  switch (m.op) {
    case 'query': {
      // Column names travel with the rows so the port can check them against the caller's shape.
      const res = await target(pglite, m.tx).query(m.sql, m.params ?? undefined);
      return { rows: res.rows, columns: res.fields.map((f) => f.name), count: res.affectedRows || res.rows.length };
    }
    case 'exec':
      await target(pglite, m.tx).exec(m.sql);
      return null;
    case 'begin':
      return begin(pglite);
    case 'commit':
      return finish(m.tx, 'commit');
    case 'rollback':
      return finish(m.tx, 'rollback');
    case 'dump': {
      const blob = await pglite.dumpDataDir(m.compression ?? 'gzip');
      return new Uint8Array(await blob.arrayBuffer());
    }
    case 'close':
      await pglite.close();
      return null;
    default:
      throw new Error(`unknown operation ${m.op}`);
  }
}

try {
  const pglite = await PGlite.create({
    dataDir: workerData.dataDir ?? undefined,
    loadDataDir: workerData.loadDataDir ? new Blob([workerData.loadDataDir]) : undefined,
    parsers,
    extensions: { vector },
  });
  parentPort.on('message', (m) => {
    handle(pglite, m).then(
      (result) => parentPort.postMessage({ id: m.id, result }),
      (e) => parentPort.postMessage({ id: m.id, error: errorData(e) }),
    );
  });
  parentPort.postMessage({ ready: true });
} catch (e) {
  parentPort.postMessage({ ready: false, error: errorData(e) });
}

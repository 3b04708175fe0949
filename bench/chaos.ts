/**
 * `npm run bench -- chaos` (issue 37 "Faults survived, measured"): the chaos scenario of
 * test/helpers/chaos.ts at full size — 2 api, 2 dispatcher and 2 worker processes on PostgreSQL,
 * Redis, Mosquitto (dynamic security) and S3, BENCH_SATELLITES (200) reference satellites, one fault
 * at a time (SIGKILL of a dispatcher, a worker, an api process; restarts of Redis, Mosquitto,
 * PostgreSQL), each part down BENCH_DOWN_MS (3000). Needs DATABASE_URL and the mosquitto and
 * redis-server binaries. Target: 0 lost, 0 duplicated, every outbox drained.
 */
import { runChaos } from '../test/helpers/chaos.ts';

export async function run(): Promise<void> {
  const satellites = Number(process.env.BENCH_SATELLITES ?? 200);
  const result = await runChaos({
    satellites,
    downMs: Number(process.env.BENCH_DOWN_MS ?? 3000),
    settleMs: Number(process.env.BENCH_SETTLE_MS ?? 900_000),
    log: (line) => console.log(line),
  });
  console.log(`\nchaos: ${satellites} satellites, ${result.faults.length} faults, ${(result.totalMs / 1000).toFixed(0)} s`);
  for (const f of result.faults) console.log(`  ${f.fault.padEnd(22)} ${(f.ms / 1000).toFixed(1)} s until back`);
  const rows: Array<[string, number | string]> = [
    ['chunks sent', result.sent],
    ['acked', result.acked],
    ['stored', result.stored],
    ['lost', result.lost],
    ['stored twice', result.storedTwice],
    ['objects without a row', result.objectsWithoutRow],
    ['rows without an object', result.rowsWithoutObject],
    ['left unclassified', result.unclassified],
    ['detections', result.detections],
    ['detections duplicated', result.detectionsDuplicated],
    ['satellites not drained', result.undrained],
  ];
  for (const [k, v] of rows) console.log(`  ${k.padEnd(24)} ${v}`);
  for (const w of result.watches)
    console.log(`  socket on ${w.name}${w.killed ? ' (killed once)' : ''}: ${w.received} detection events, ${w.missed} missed`);
  const ok = result.lost === 0 && result.storedTwice === 0 && result.detectionsDuplicated === 0 && result.undrained === 0;
  console.log(ok ? 'target met: 0 lost, 0 duplicated, every outbox drained' : 'TARGET MISSED');
}

/**
 * Issue 37 "Faults survived, measured", the reduced form of `npm run bench -- chaos` that CI runs:
 * 2 api, 2 dispatcher and 2 worker processes on PostgreSQL, a Redis and a Mosquitto (dynamic
 * security) of the test's own, and S3 (s3rver); eight reference satellites record in rounds while,
 * one at a time, a dispatcher, a worker and an api process are killed with SIGKILL and started again,
 * and Redis, Mosquitto and PostgreSQL are restarted (test/helpers/chaos.ts). Every chunk recorded
 * ends stored once with its object, acked and classified; no detection twice; every outbox drained.
 * Needs DATABASE_URL, and the mosquitto and redis-server binaries.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runChaos } from './helpers/chaos.ts';
import { MOSQUITTO, MOSQUITTO_SKIP } from './helpers/mosquitto.ts';
import { noRedisServer } from './helpers/redis-server.ts';

const skip = !process.env.DATABASE_URL ? 'the chaos scenario needs DATABASE_URL (PostgreSQL)' : !MOSQUITTO ? MOSQUITTO_SKIP : noRedisServer;

describe('chaos: every part killed or restarted once in a busy run', { skip, timeout: 900_000 }, () => {
  test('nothing lost, nothing twice, every outbox drained', async () => {
    const satellites = 8;
    const r = await runChaos({ satellites, quietRounds: 1, downMs: 2000, log: (l) => console.log(`# ${l}`) });
    console.log(`# ${JSON.stringify(r)}`);
    // Rounds: 1 quiet, then per fault one before it and one while the part is down, then 1 quiet.
    assert.equal(r.sent, satellites * (2 + 2 * r.faults.length), 'every round recorded a chunk on every satellite');
    assert.equal(r.faults.length, 6);
    assert.equal(r.lost, 0, 'no chunk lost');
    assert.equal(r.stored, r.sent);
    assert.equal(r.acked, r.sent, 'every chunk acked');
    assert.equal(r.storedTwice, 0);
    assert.equal(r.objectsWithoutRow, 0, 'no audio object without its chunk row');
    assert.equal(r.rowsWithoutObject, 0, 'no chunk row without its audio object');
    assert.equal(r.unclassified, 0, 'every stored chunk classified');
    assert.ok(r.detections > 0, 'the workers made detections');
    assert.equal(r.detectionsDuplicated, 0, 'no detection recorded twice');
    assert.equal(r.undrained, 0, 'every satellite drained its outbox');
    for (const w of r.watches) assert.ok(w.received > 0, `the socket on ${w.name} heard detections`);
  });
});

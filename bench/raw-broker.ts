/**
 * The raw broker the ingest bench measures the hub against (issue 4 "Figures to reach"): a bare
 * Aedes in its own process, TCP on a free loopback port, no authentication, no persistence
 * beyond Aedes' in-memory default. One in-broker subscription on `chorus/+/+/audio` JSON-parses
 * every message and does nothing else; Aedes sends the PUBACK of a QoS 1 publish only after
 * every subscriber took the message, so a publisher that waits for PUBACK waits for the parse.
 *
 * Protocol with the parent: prints `listening <port>` once ready; on SIGTERM (or when the
 * parent goes away) closes and prints `parsed <n> failed <m>` before exiting.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Aedes } from 'aedes';

let parsed = 0;
let failed = 0;

const aedes = await Aedes.createBroker({ id: 'bench-raw' });
await new Promise<void>((resolve) =>
  aedes.subscribe(
    'chorus/+/+/audio',
    (packet, done) => {
      try {
        JSON.parse(packet.payload.toString('utf8'));
        parsed++;
      } catch {
        failed++;
      }
      done();
    },
    resolve,
  ),
);

const sockets = new Set<net.Socket>();
const server = net.createServer((socket) => {
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
  aedes.handle(socket);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
console.log(`listening ${(server.address() as AddressInfo).port}`);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await new Promise<void>((resolve) => aedes.close(() => resolve()));
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  process.stdout.write(`parsed ${parsed} failed ${failed}\n`, () => process.exit(0));
}
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
// An orphan never outlives the bench: stdin is a pipe from the parent and closes with it.
process.stdin.on('end', () => void stop()).resume();

/**
 * A redis-server of the test's own on a free port, so a test can take Redis away for real (kill it)
 * without touching the Redis other files use; started again on the same port, it comes back.
 */
import fs from 'node:fs';
import net from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './ports.ts';
import { waitFor } from './wait.ts';

export const REDIS_SERVER = '/usr/bin/redis-server';
export const noRedisServer = fs.existsSync(REDIS_SERVER) ? false : 'redis-server is not installed';

export interface OwnRedis {
  url: string;
  /** Kills it (SIGKILL) and waits for its exit. */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
}

/**
 * `persistDir`: an append-only file there, written through on every command (`appendfsync always`),
 * as an operator keeps a Redis whose queue must outlive a restart; without it nothing outlives one.
 */
export async function ownRedis(opts: { persistDir?: string } = {}): Promise<OwnRedis> {
  const port = await freePort();
  let proc: ChildProcess | null = null;
  const persistence = opts.persistDir
    ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', opts.persistDir]
    : ['--appendonly', 'no'];
  const start = async () => {
    proc = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence], { stdio: 'ignore' });
    await waitFor(
      'our Redis to answer',
      () =>
        new Promise<boolean>((resolve) => {
          const s = net.connect(port, '127.0.0.1', () => {
            s.end();
            resolve(true);
          });
          s.on('error', () => resolve(false));
        }),
    );
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    async kill() {
      const p = proc;
      if (!p || p.exitCode !== null || p.signalCode !== null) return;
      const gone = new Promise((resolve) => p.once('exit', resolve));
      p.kill('SIGKILL');
      await gone;
    },
    start,
  };
}

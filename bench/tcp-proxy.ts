/**
 * A TCP proxy the outage bench stands between the hub and a part (PostgreSQL, Redis): `cut()`
 * resets every open connection and refuses new ones, as a server that went down or a network
 * that broke would look to the hub; `restore()` lets connections through again. The part itself
 * keeps running, so nothing else on the machine notices the outage.
 */
import net from 'node:net';

export interface TcpProxy {
  /** `host:port` to give the hub instead of the part's own. */
  readonly port: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let down = false;
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (down) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const drop = () => {
      open.delete(client);
      open.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    down = true;
    for (const s of open) s.resetAndDestroy();
    open.clear();
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    cut,
    restore() {
      down = false;
    },
    async close() {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A port nobody listens on, for a process that must be told its port before it starts (a hub's
 * PORT and MQTT_PORT, Mosquitto's listener). Picked at random below the kernel's ephemeral range:
 * a port the kernel handed out for a bind to port 0 is free again once closed, and with many test
 * hubs binding port 0 beside us, one took it before the child bound it (EADDRINUSE). Below the
 * range only another caller of this function can take it, one chance in thousands.
 */
import fs from 'node:fs';
import net from 'node:net';

function ephemeralLow(): number {
  try {
    const [low] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && low > 12_000) return low;
  } catch {}
  return 32_768;
}

const HIGH = ephemeralLow();
const LOW = Math.max(10_000, HIGH - 12_000);

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port between ${LOW} and ${HIGH}`);
}

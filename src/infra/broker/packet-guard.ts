/**
 * A size cap in front of Aedes (issue 33 item 5). mqtt-packet reads a packet's remaining length
 * from its fixed header and then buffers until that many bytes arrived: a CONNECT declaring
 * 150 MiB was read into memory before any login check. This stream sits between the socket and
 * Aedes, reads each fixed header as the bytes pass (no copy), and destroys the connection as soon
 * as a header declares a packet above the cap: a small one until the login succeeded, the
 * satellite cap after.
 */
import { Duplex } from 'node:stream';

export interface PacketCaps {
  /** Largest whole packet (fixed header included) before the login succeeded. */
  readonly beforeLogin: number;
  /** Largest whole packet once logged in. */
  readonly afterLogin: number;
}

export interface PacketViolation {
  /** MQTT control packet type (1 CONNECT, 3 PUBLISH, …); null for a malformed length. */
  readonly type: number | null;
  /** Declared size of the whole packet in bytes; null for a malformed length. */
  readonly bytes: number | null;
  readonly limit: number;
  readonly loggedIn: boolean;
}

/**
 * The guarded connection Aedes reads and writes. `inner` is a TCP socket or a WebSocket stream;
 * writes go straight to it.
 */
export class PacketGuard extends Duplex {
  private loggedIn = false;
  /** Bytes of the current packet's body still to pass; 0 between packets. */
  private bodyLeft = 0;
  /** The fixed header read so far (type byte and length bytes), while it spans chunks. */
  private header: number[] = [];

  constructor(
    private readonly inner: Duplex,
    private readonly caps: PacketCaps,
    private readonly onViolation: (v: PacketViolation) => void,
  ) {
    super({ allowHalfOpen: false });
    inner.on('data', (chunk: Buffer) => {
      if (!this.check(chunk)) return;
      if (!this.push(chunk)) inner.pause();
    });
    inner.on('end', () => this.push(null));
    inner.on('error', (err) => this.destroy(err));
    inner.on('close', () => this.destroy());
  }

  /** The peer's socket address (TCP), as Aedes and the login limit read it. */
  get remoteAddress(): string | undefined {
    return (this.inner as { remoteAddress?: string }).remoteAddress;
  }

  /** The login succeeded: from now on the larger cap applies. */
  loginSucceeded(): void {
    this.loggedIn = true;
  }

  /** Walks the fixed headers in `chunk`; false (and the connection destroyed) on a violation. */
  private check(chunk: Buffer): boolean {
    let at = 0;
    while (at < chunk.length) {
      if (this.bodyLeft > 0) {
        const skip = Math.min(this.bodyLeft, chunk.length - at);
        this.bodyLeft -= skip;
        at += skip;
        continue;
      }
      this.header.push(chunk[at++]);
      if (this.header.length === 1) continue;
      const last = this.header[this.header.length - 1];
      if (last & 0x80) {
        // The remaining length takes at most four bytes (MQTT-2.2.3).
        if (this.header.length === 5) return this.refuse(null, null);
        continue;
      }
      let remaining = 0;
      for (let i = this.header.length - 1; i >= 1; i--) remaining = remaining * 128 + (this.header[i] & 0x7f);
      const bytes = this.header.length + remaining;
      const type = this.header[0] >> 4;
      this.header = [];
      if (bytes > this.limit()) return this.refuse(type, bytes);
      this.bodyLeft = remaining;
    }
    return true;
  }

  private limit(): number {
    return this.loggedIn ? this.caps.afterLogin : this.caps.beforeLogin;
  }

  private refuse(type: number | null, bytes: number | null): false {
    this.onViolation({ type, bytes, limit: this.limit(), loggedIn: this.loggedIn });
    this.inner.destroy();
    this.destroy();
    return false;
  }

  override _read(): void {
    this.inner.resume();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.inner.write(chunk, encoding, done);
  }

  override _final(done: (err?: Error | null) => void): void {
    this.inner.end(done);
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.inner.destroy();
    done(err);
  }
}

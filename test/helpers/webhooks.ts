import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A UUIDv7 minted at `ms` exactly. services/shared/ids.ts keeps ids monotonic within a process, so it cannot mint
 * an id in the past; tests that backdate events need one.
 */
export function uuidAt(ms: number): string {
  const b = randomBytes(16);
  b.writeUIntBE(ms, 0, 6);
  b[6] = 0x70 | (b[6]! & 0x0f);
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A real HTTP receiver on loopback. `status` decides the answer to each request (default 204); every request is
 * recorded. It can go down and come back on the same port, as an integrator's server would.
 */
export class Receiver {
  readonly received: Received[] = [];
  status: (r: Received) => number = () => 204;
  private server: Server | undefined;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(port = 0): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        this.received.push(r);
        const code = this.status(r);
        res.writeHead(code, code >= 300 && code < 400 ? { location: 'http://127.0.0.1:9/elsewhere' } : {});
        res.end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  /** Stops listening: connections are refused until `start(this.port)`. */
  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }

  /** Waits until `n` requests have arrived (or fails after `ms`). */
  async waitFor(n: number, ms = 10_000): Promise<Received[]> {
    const until = Date.now() + ms;
    while (this.received.length < n) {
      if (Date.now() > until) throw new Error(`receiver got ${this.received.length} requests, expected ${n}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return this.received;
  }
}

/** Polls `probe` until it returns a value that is not undefined. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

import { Socket } from 'node:net';
import dns2 from 'dns2';

/**
 * A real DNS server on loopback (UDP and TCP on one port) for the domain-check tests: the service's resolver
 * (node:dns, DNS_SERVERS=127.0.0.1:<port>) queries it like any name server. Tests set the records a name has; a
 * name with none of the asked type but with others is NODATA, a name with no records at all is NXDOMAIN, and
 * `silence(name)` makes the server drop queries for it (the resolver times out). `fail(name)` answers SERVFAIL.
 */
export interface TestDnsServer {
  /** `127.0.0.1:<port>`, as DNS_SERVERS takes it. */
  address: string;
  port: number;
  /** Replaces the TXT records of a name (each string one record). */
  txt(name: string, ...values: string[]): void;
  /** Replaces the CNAME of a name. */
  cname(name: string, target: string): void;
  /** An A record, so that the name exists (NODATA rather than NXDOMAIN for other types). */
  a(name: string, address: string): void;
  silence(name: string): void;
  fail(name: string): void;
  /**
   * Answers the name over UDP truncated (TC bit, no records), as a server does when the answer is too large for a
   * datagram; the resolver then asks again over TCP, where the records come in full.
   */
  tcpOnly(name: string): void;
  /** Forgets every record of a name. */
  remove(name: string): void;
  /** Queries received, as `udp|tcp TYPE name`, oldest first. */
  queries(): string[];
  close(): Promise<void>;
}

interface Records {
  txt?: string[];
  cname?: string;
  a?: string;
  silent?: boolean;
  servfail?: boolean;
  tcpOnly?: boolean;
}

const { Packet } = dns2;
/** Response codes (RFC 1035 4.1.1); dns2 has them at runtime but its types do not declare them. */
const RCODE = { SERVFAIL: 2, NXDOMAIN: 3 } as const;
const TYPE_NAMES = Object.fromEntries(Object.entries(Packet.TYPE).map(([k, v]) => [v, k])) as Record<number, string>;

export async function startTestDnsServer(): Promise<TestDnsServer> {
  const zone = new Map<string, Records>();
  const seen: string[] = [];
  const key = (name: string) => name.toLowerCase().replace(/\.$/, '');

  const handle: dns2.DnsHandler = (request, send, client) => {
    const response = Packet.createResponseFromRequest(request);
    const [question] = request.questions;
    if (!question) return void send(response);
    const name = key(question.name);
    const overTcp = client instanceof Socket;
    seen.push(`${overTcp ? 'tcp' : 'udp'} ${TYPE_NAMES[question.type] ?? question.type} ${name}`);
    const records = zone.get(name);
    if (records?.silent) return;
    if (records?.servfail) {
      response.header.rcode = RCODE.SERVFAIL;
      return void send(response);
    }
    if (records?.tcpOnly && !overTcp) {
      response.header.tc = 1;
      return void send(response);
    }
    if (!records) {
      response.header.rcode = RCODE.NXDOMAIN;
      return void send(response);
    }
    const base = { name: question.name, class: Packet.CLASS.IN, ttl: 60 };
    if (records.cname !== undefined && question.type !== Packet.TYPE.TXT) {
      response.answers.push({ ...base, type: Packet.TYPE.CNAME, domain: records.cname } as never);
    } else if (question.type === Packet.TYPE.TXT) {
      for (const data of records.txt ?? []) response.answers.push({ ...base, type: Packet.TYPE.TXT, data } as never);
    } else if (question.type === Packet.TYPE.A && records.a) {
      response.answers.push({ ...base, type: Packet.TYPE.A, address: records.a } as never);
    }
    void send(response);
  };

  // UDP on a port the kernel picks, then TCP on the same number (taken meanwhile: start over with a new one).
  for (let attempt = 0; ; attempt++) {
    const udp = dns2.createUDPServer(handle);
    await udp.listen(0, '127.0.0.1');
    const { port } = udp.address();
    const tcp = dns2.createTCPServer(handle);
    // A resolver may keep its TCP connection open; closing the server ends them.
    const sockets = new Set<Socket>();
    tcp.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    const bound = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) {
      udp.close();
      if (attempt < 5) continue;
      throw new Error('no port free for both UDP and TCP');
    }
    const set = (name: string, patch: Records) => zone.set(key(name), { ...zone.get(key(name)), ...patch });
    return {
      address: `127.0.0.1:${port}`,
      port,
      txt: (name, ...values) => set(name, { txt: values }),
      cname: (name, target) => set(name, { cname: target }),
      a: (name, address) => set(name, { a: address }),
      silence: (name) => set(name, { silent: true }),
      fail: (name) => set(name, { servfail: true }),
      tcpOnly: (name) => set(name, { tcpOnly: true }),
      remove: (name) => void zone.delete(key(name)),
      queries: () => [...seen],
      close: () =>
        Promise.all([
          new Promise<void>((resolve) => udp.close(() => resolve())),
          new Promise<void>((resolve) => {
            tcp.close(() => resolve());
            for (const socket of sockets) socket.destroy();
          }),
        ]).then(() => undefined),
    };
  }
}

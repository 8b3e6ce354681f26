import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OTLP/HTTP trace receiver on loopback, as a collector's: `POST /v1/traces` with an ExportTraceServiceRequest in
 * either encoding, `application/json` (http/json) or `application/x-protobuf` (http/protobuf, decoded here by the
 * few lines of the protobuf wire format the trace messages need). Keeps every span it was sent, flattened.
 */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  serviceName: string;
  attributes: Record<string, string | number | boolean>;
  /** Status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it (the exporters append /v1/traces). */
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the requests received, in order. */
  contentTypes: string[];
  /** Resolves when `predicate` holds for the spans received so far, polling until `timeoutMs`. */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks);
      try {
        if (type === 'application/json') spans.push(...fromJson(JSON.parse(body.toString('utf8')) as JsonRequest));
        else if (type === 'application/x-protobuf') spans.push(...fromProtobuf(body));
        else {
          res.writeHead(415).end();
          return;
        }
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end((err as Error).message);
        return;
      }
      contentTypes.push(type);
      // An empty ExportTraceServiceResponse: everything accepted.
      if (type === 'application/json') res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    async waitFor(predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(spans)) {
        if (Date.now() > deadline) throw new Error(`the spans expected did not arrive within ${timeoutMs} ms; received: ${spans.map((s) => `${s.serviceName}:${s.name}`).join(', ')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return spans;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// http/json

interface JsonValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface JsonKeyValue {
  key: string;
  value: JsonValue;
}
interface JsonRequest {
  resourceSpans?: {
    resource?: { attributes?: JsonKeyValue[] };
    scopeSpans?: {
      spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: JsonKeyValue[]; status?: { code?: number } }[];
    }[];
  }[];
}

const jsonAttributes = (list: JsonKeyValue[] = []): ReceivedSpan['attributes'] =>
  Object.fromEntries(
    list.map(({ key, value }) => [key, value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue ?? ''))]),
  );

function fromJson(body: JsonRequest): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const serviceName = String(jsonAttributes(rs.resource?.attributes)['service.name'] ?? '');
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId.toLowerCase(),
          spanId: s.spanId.toLowerCase(),
          parentSpanId: (s.parentSpanId ?? '').toLowerCase(),
          name: s.name,
          kind: s.kind,
          serviceName,
          attributes: jsonAttributes(s.attributes),
          statusCode: s.status?.code ?? 0,
        });
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// http/protobuf: the wire format (varints, length-delimited fields, fixed 32/64 bits) and the fields of
// opentelemetry/proto/collector/trace/v1 that a span's identity, name, kind, resource and attributes need.

type Field = number | Buffer;

function fields(buf: Buffer): Map<number, Field[]> {
  const out = new Map<number, Field[]>();
  let pos = 0;
  const varint = (): number => {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (pos >= buf.length) throw new Error('truncated varint');
      const b = buf[pos++]!;
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if ((b & 0x80) === 0) return result;
    }
  };
  while (pos < buf.length) {
    const tag = varint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    let value: Field;
    if (wire === 0) value = varint();
    else if (wire === 1) {
      value = buf.subarray(pos, pos + 8);
      pos += 8;
    } else if (wire === 2) {
      const len = varint();
      value = buf.subarray(pos, pos + len);
      pos += len;
    } else if (wire === 5) {
      value = buf.subarray(pos, pos + 4);
      pos += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
    if (pos > buf.length) throw new Error('truncated field');
    const list = out.get(field) ?? [];
    list.push(value);
    out.set(field, list);
  }
  return out;
}

const messages = (f: Map<number, Field[]>, n: number): Map<number, Field[]>[] => (f.get(n) ?? []).map((v) => fields(v as Buffer));
const bytes = (f: Map<number, Field[]>, n: number): Buffer => (f.get(n)?.[0] as Buffer | undefined) ?? Buffer.alloc(0);
const text = (f: Map<number, Field[]>, n: number): string => bytes(f, n).toString('utf8');
const num = (f: Map<number, Field[]>, n: number): number => (f.get(n)?.[0] as number | undefined) ?? 0;

function protoAttributes(list: Map<number, Field[]>[]): ReceivedSpan['attributes'] {
  const out: ReceivedSpan['attributes'] = {};
  for (const kv of list) {
    const value = messages(kv, 2)[0] ?? new Map<number, Field[]>();
    if (value.has(1)) out[text(kv, 1)] = text(value, 1);
    else if (value.has(2)) out[text(kv, 1)] = num(value, 2) === 1;
    else if (value.has(3)) out[text(kv, 1)] = num(value, 3);
    else if (value.has(4)) out[text(kv, 1)] = bytes(value, 4).readDoubleLE(0);
    else out[text(kv, 1)] = '';
  }
  return out;
}

export function fromProtobuf(body: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of messages(fields(body), 1)) {
    const resource = messages(rs, 1)[0] ?? new Map<number, Field[]>();
    const serviceName = String(protoAttributes(messages(resource, 1))['service.name'] ?? '');
    for (const ss of messages(rs, 2)) {
      for (const s of messages(ss, 2)) {
        const status = messages(s, 15)[0] ?? new Map<number, Field[]>();
        out.push({
          traceId: bytes(s, 1).toString('hex'),
          spanId: bytes(s, 2).toString('hex'),
          parentSpanId: bytes(s, 4).toString('hex'),
          name: text(s, 5),
          kind: num(s, 6),
          serviceName,
          attributes: protoAttributes(messages(s, 9)),
          statusCode: num(status, 3),
        });
      }
    }
  }
  return out;
}

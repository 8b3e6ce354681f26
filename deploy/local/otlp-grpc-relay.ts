import * as http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/**
 * restate-server exports its traces over OTLP/gRPC only (`tracing-endpoint`), while the service speaks OTLP/HTTP to
 * OTEL_EXPORTER_OTLP_ENDPOINT. This relay, on a loopback port of `npm start` and `start:cluster`, takes the server's
 * gRPC export calls and posts each one to `<endpoint>/v1/traces`, so that one variable sends every span to one
 * receiver. The message is the same ExportTraceServiceRequest in both transports: gRPC frames it (a compression
 * flag and a length before the bytes), OTLP/HTTP sends the bytes as the body. It is forwarded as `http/protobuf`,
 * which every OTLP/HTTP receiver takes, whatever OTEL_EXPORTER_OTLP_PROTOCOL says for the service's own spans.
 */
export interface OtlpGrpcRelay {
  /** http://127.0.0.1:<port>, what restate-server's tracing-endpoint takes. */
  url: string;
  /** Export calls forwarded, and those the receiver did not take. */
  stats(): { forwarded: number; failed: number };
  close(): Promise<void>;
}

const EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
const FORWARD_TIMEOUT_MS = 10_000;

/** gRPC status codes the relay answers with. */
const GRPC_OK = 0;
const GRPC_UNIMPLEMENTED = 12;
const GRPC_UNAVAILABLE = 14;

export async function startOtlpGrpcRelay(otlpEndpoint: string): Promise<OtlpGrpcRelay> {
  const target = `${otlpEndpoint.replace(/\/+$/, '')}/v1/traces`;
  let forwarded = 0;
  let failed = 0;
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.once('close', () => sessions.delete(s));
  });
  server.on('stream', (stream, headers) => {
    const answer = (status: number, message?: string) => {
      if (stream.destroyed) return;
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': String(status), ...(message ? { 'grpc-message': encodeURIComponent(message) } : {}) }));
      // An empty ExportTraceServiceResponse, framed: not compressed, length 0.
      stream.end(status === GRPC_OK ? Buffer.alloc(5) : undefined);
    };
    if (headers[':method'] !== 'POST' || headers[':path'] !== EXPORT_PATH) {
      stream.resume();
      answer(GRPC_UNIMPLEMENTED, 'only trace export is relayed');
      return;
    }
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', () => {});
    stream.once('end', () => {
      let messages: Buffer[];
      try {
        messages = grpcMessages(Buffer.concat(chunks), String(headers['grpc-encoding'] ?? 'identity'));
      } catch (err) {
        failed++;
        answer(GRPC_UNAVAILABLE, (err as Error).message);
        return;
      }
      void Promise.all(
        messages.map(async (body) => {
          const res = await fetch(target, {
            method: 'POST',
            headers: { 'content-type': 'application/x-protobuf' },
            body: new Uint8Array(body),
            signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
          });
          await res.arrayBuffer();
          if (!res.ok) throw new Error(`the OTLP receiver answered ${res.status}`);
        }),
      ).then(
        () => {
          forwarded += messages.length;
          answer(GRPC_OK);
        },
        (err: unknown) => {
          // UNAVAILABLE: the server keeps the batch and retries, as it would against a collector that is down.
          failed++;
          answer(GRPC_UNAVAILABLE, err instanceof Error ? err.message : String(err));
        },
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => ({ forwarded, failed }),
    close() {
      const closed = new Promise<void>((r) => server.close(() => r()));
      // The server's exporter keeps its HTTP/2 session open; close() alone would wait for it.
      for (const s of sessions) s.destroy();
      return closed;
    },
  };
}

/** The messages of a gRPC request body: each a compression flag byte, a 4-byte big-endian length, the bytes. */
export function grpcMessages(body: Buffer, encoding: string): Buffer[] {
  const out: Buffer[] = [];
  let pos = 0;
  while (pos < body.length) {
    if (pos + 5 > body.length) throw new Error('truncated gRPC frame');
    const compressed = body[pos] === 1;
    const length = body.readUInt32BE(pos + 1);
    const bytes = body.subarray(pos + 5, pos + 5 + length);
    if (bytes.length !== length) throw new Error('truncated gRPC message');
    if (compressed && encoding !== 'gzip') throw new Error(`unsupported grpc-encoding ${encoding}`);
    out.push(compressed ? gunzipSync(bytes) : bytes);
    pos += 5 + length;
  }
  return out;
}

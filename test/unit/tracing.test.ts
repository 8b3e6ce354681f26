import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { grpcMessages } from '../../deploy/local/otlp-grpc-relay.ts';
import { restateNodeConfig, type RestateNodeSpec } from '../../deploy/local/restate-cluster.ts';
import { statementSummary, statementText } from '../../services/observability/db-spans.ts';
import { readConfig } from '../../services/shared/config.ts';

const template = (strings: string[], ...values: unknown[]) => ({ strings: Object.assign(strings, { raw: strings }), values });

describe('tracing settings', () => {
  it('reads OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL and OTEL_SERVICE_NAME; unset is off', () => {
    assert.deepEqual(
      (({ otlpEndpoint, otlpProtocol, otelServiceName }) => ({ otlpEndpoint, otlpProtocol, otelServiceName }))(readConfig({})),
      { otlpEndpoint: undefined, otlpProtocol: 'http/protobuf', otelServiceName: undefined },
    );
    const set = readConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'faktura-eu' });
    assert.deepEqual([set.otlpEndpoint, set.otlpProtocol, set.otelServiceName], ['http://collector:4318', 'http/json', 'faktura-eu']);
  });

  it('refuses gRPC, an unknown protocol and an endpoint that is not an http(s) URL', () => {
    assert.throws(() => readConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), /OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json/);
    assert.throws(() => readConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), /OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/);
    assert.throws(() => readConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }), /OTEL_EXPORTER_OTLP_ENDPOINT is not a URL/);
  });
});

describe('SQL span names', () => {
  const cases: [string, ReturnType<typeof template>, string][] = [
    ['a select', template(['SELECT id FROM invoices WHERE organization_id = ', ' AND id = ', ''], 'org', 'id'), 'SELECT invoices'],
    ['an insert', template(['\n  INSERT INTO payments (id, amount_oere) VALUES (', ', ', ')'], 'x', 4500), 'INSERT payments'],
    ['an update of a quoted identifier', template(['UPDATE ', ' t SET status = ', ''], { strings: ['"invoice_sends"'], args: [] }, 'sent'), 'UPDATE invoice_sends'],
    ['a delete', template(['DELETE FROM idempotency_keys WHERE created_at < ', ''], '2026-01-01'), 'DELETE idempotency_keys'],
    ['a statement that starts with a fragment', template(['', ' FROM customers'], { strings: ['SELECT count(*)'], args: [] }), 'SELECT customers'],
    ['a function call', template(['SELECT pg_try_advisory_xact_lock(', ')'], 42), 'SELECT'],
    ['a WITH that writes', template(['WITH next AS (SELECT id FROM wake_index LIMIT ', ') UPDATE wake_index w SET claimed_at = now() FROM next WHERE w.id = next.id'], 8), 'UPDATE wake_index'],
    ['a WITH that reads', template(['WITH next AS (SELECT 1) SELECT * FROM next']), 'WITH'],
  ];
  for (const [what, { strings, values }, name] of cases) {
    it(`${what}: ${name}`, () => assert.equal(statementSummary(statementText(strings, values)).text, name));
  }

  it('never carries a value: every value is a ?, fragments keep their own text', () => {
    const { strings, values } = template(['SELECT * FROM customers WHERE email = ', ' AND ', ''], 'ida@example.dk', { strings: ['name = ', ''], args: ['Ida'] });
    assert.equal(statementText(strings, values), 'SELECT * FROM customers WHERE email = ? AND name = ?');
  });
});

describe('restate-server tracing', () => {
  const nodes: RestateNodeSpec[] = [1, 2, 3].map((i) => ({ name: `restate-${i}`, nodeName: `n${i}`, baseDir: `/data/n${i}`, ports: { ingress: 9000 + i, admin: 9100 + i, fabric: 9200 + i } }));

  it('a cluster node exports to the relay only when tracing is on', () => {
    assert.doesNotMatch(restateNodeConfig(nodes[0]!, nodes), /tracing/);
    assert.match(restateNodeConfig(nodes[0]!, nodes, undefined, { tracingEndpoint: 'http://127.0.0.1:4317' }), /^tracing-endpoint = "http:\/\/127\.0\.0\.1:4317"$/m);
  });

  it('the relay unframes gRPC messages, gzip-compressed ones too, and refuses a truncated frame', () => {
    const frame = (flag: number, bytes: Buffer) => {
      const head = Buffer.alloc(5);
      head[0] = flag;
      head.writeUInt32BE(bytes.length, 1);
      return Buffer.concat([head, bytes]);
    };
    const a = Buffer.from([0x0a, 0x02, 0x08, 0x01]);
    const b = Buffer.from('second message');
    assert.deepEqual(grpcMessages(Buffer.concat([frame(0, a), frame(1, gzipSync(b))]), 'gzip'), [a, b]);
    assert.deepEqual(grpcMessages(Buffer.alloc(0), 'identity'), []);
    assert.throws(() => grpcMessages(frame(0, a).subarray(0, 6), 'identity'), /truncated gRPC message/);
    assert.throws(() => grpcMessages(frame(1, a), 'identity'), /unsupported grpc-encoding/);
  });
});

import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createSmtpMailer } from '../../activities/mail/smtp-mailer.ts';
import { createRestateMailDispatch } from '../../services/invoices/restate-mail-dispatch.ts';
import { otlpExportersCreated, startTracing, type ServiceTracing } from '../../services/observability/tracing.ts';
import { startOtlpGrpcRelay, type OtlpGrpcRelay } from '../../deploy/local/otlp-grpc-relay.ts';
import { freePort } from '../../deploy/local/ports.ts';
import { createActivities, registerDeployment, startWorkflowsEndpoint, type WorkflowsEndpoint } from '../../workflows/main.ts';
import { call, createTestOrg, startTestApp, testDb, testRenderer, type TestApp, type TestOrg } from '../helpers/context.ts';
import { startTestPay } from '../helpers/pay.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts';
import { startTestRestate, type TestRestate } from '../helpers/restate.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';

const SERVER = 2;
const CLIENT = 3;

/** Every span's parent is a span of the same trace, up to one root; the chain of names from `span` to that root. */
function ancestry(spans: ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const chain = [span];
  for (let at = span; at.parentSpanId !== ''; ) {
    const parent = byId.get(at.parentSpanId);
    assert.ok(parent, `the parent ${at.parentSpanId} of ${at.serviceName} "${at.name}" is a span of the trace`);
    assert.equal(parent.traceId, at.traceId);
    chain.push(parent);
    at = parent;
  }
  return chain;
}

interface Stack {
  receiver: OtlpReceiver;
  relay: OtlpGrpcRelay | undefined;
  restate: TestRestate;
  smtp: SmtpSink;
  endpoint: WorkflowsEndpoint;
  apiTracing: ServiceTracing;
  workflowsTracing: ServiceTracing;
  t: TestApp;
  org: TestOrg;
  workflowLines: string[];
  close(): Promise<void>;
}

/**
 * The API on the run's database, a restate-server of its own, the workflows endpoint and an SMTP sink, the API
 * exporting in http/json and the workflows in http/protobuf to one receiver. With `restateTracing`, restate-server
 * exports its own spans over OTLP/gRPC to the relay `npm start` runs, and from there to the same receiver.
 */
async function startStack(restateTracing: boolean): Promise<Stack> {
  const receiver = await startOtlpReceiver();
  const smtp = await startSmtpSink();
  const relay = restateTracing ? await startOtlpGrpcRelay(receiver.url) : undefined;
  // restate-server's exporter sends every 5 s by default; the test waits less.
  const restate = await startTestRestate(relay ? { RESTATE_TRACING_ENDPOINT: relay.url, OTEL_BSP_SCHEDULE_DELAY: '200' } : {});
  const apiTracing = startTracing({ otlpEndpoint: receiver.url, otlpProtocol: 'http/json', otelServiceName: undefined }, 'faktura-api');
  const workflowsTracing = startTracing({ otlpEndpoint: receiver.url, otlpProtocol: 'http/protobuf', otelServiceName: undefined }, 'faktura-workflows');
  const workflowLines: string[] = [];
  const { db, keyring } = testDb();
  const endpoint = await startWorkflowsEndpoint({
    activities: createActivities(
      db,
      { idempotencyRetentionDays: 30, mailFromAddress: 'no-reply@faktura.invalid', publicApiUrl: undefined },
      { keyring, mailer: createSmtpMailer(smtp.url, () => {}), pdf: testRenderer() },
    ),
    host: '127.0.0.1',
    port: await freePort(),
    logStream: new Writable({
      write(chunk, _e, cb) {
        workflowLines.push(...String(chunk).split('\n').filter(Boolean));
        cb();
      },
    }),
    tracing: workflowsTracing,
  });
  await registerDeployment(restate.adminUrl, endpoint.url);
  const t = await startTestApp({ mailDispatch: createRestateMailDispatch(restate.ingressUrl, db), tracing: apiTracing });
  const org = await createTestOrg({ name: 'Bager Hansen ApS', email: 'regnskab@bager.dk', bankReg: '1234', bankAccount: '0001234567' });
  return {
    receiver, relay, restate, smtp, endpoint, apiTracing, workflowsTracing, t, org, workflowLines,
    async close() {
      await t.close();
      await endpoint.close();
      await apiTracing.shutdown();
      await workflowsTracing.shutdown();
      await restate.stop();
      await relay?.close();
      await smtp.close();
      await receiver.close();
    },
  };
}

/** Creates, issues and sends one invoice with one call; the spans of its trace once the mail step's and its attempt's are in. */
async function sendOneInvoice(stack: Stack, waitAlsoFor: (all: ReceivedSpan[], invoiceId: string) => boolean = () => true) {
  const { t, org, smtp, receiver } = stack;
  const customer = (await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: { type: 'company', name: 'Kunde A/S', email: 'ap@kunde.dk' } })).body.data.id;
  const sentBefore = smtp.received.length;
  const res = await call(t.app, 'POST', '/v1/invoices?send=true', { key: org.apiKey, body: { customerId: customer, lines: [{ description: 'Rugbrød', quantity: 2, unitPriceOere: 4500 }] } });
  assert.equal(res.status, 201);
  const invoiceId = res.body.data.id as string;
  const names = ['run (mail)', 'smtp send', `attempt InvoiceMail/${invoiceId}/deliver`];
  const all = await receiver.waitFor((spans) => {
    const root = spans.find((s) => s.name === 'POST /v1/invoices' && s.attributes['http.response.status_code'] === 201 && spans.some((a) => a.name === names[2] && a.traceId === s.traceId));
    return !!root && names.every((n) => spans.some((s) => s.name === n && s.traceId === root.traceId)) && waitAlsoFor(spans, invoiceId);
  });
  assert.equal(smtp.received.length, sentBefore + 1);
  const attempt = all.find((s) => s.name === names[2])!;
  const trace = all.filter((s) => s.traceId === attempt.traceId);
  const root = trace.find((s) => s.name === 'POST /v1/invoices');
  assert.ok(root, `the attempt's trace has the API request; it has ${trace.map((s) => `${s.serviceName}:${s.name}`).join(', ')}`);
  return { invoiceId, trace, root, attempt };
}

/**
 * Traces end to end: the API (SERVER span per request), its hand-off to Restate's ingress (CLIENT span carrying
 * `traceparent`), restate-server's own spans, the invocation on the workflows endpoint (the Restate SDK hook's attempt
 * span) and its steps (one span per `ctx.run`), down to SQL and SMTP, all exported to an OTLP/HTTP receiver on
 * loopback.
 */
describe('traces', function () {
  // A restate-server, Chromium's first PDF and the exporters' batches (restate-server's every 200 ms here).
  this.timeout(60_000);
  let stack: Stack;
  before(async () => {
    stack = await startStack(true);
  });
  after(async () => {
    await stack?.close();
  });

  it('one invoice created, issued and sent is one trace: API request → hand-off → Restate → invocation → mail step → SMTP', async () => {
    const { receiver, relay } = stack;
    // restate-server's spans come in batches of their own: the attempt's parent is one of them.
    const { invoiceId, trace, root, attempt } = await sendOneInvoice(stack, (all, id) =>
      all.some((p) => all.some((a) => a.name === `attempt InvoiceMail/${id}/deliver` && a.parentSpanId === p.spanId)),
    );
    assert.equal(root.serviceName, 'faktura-api');
    assert.equal(root.kind, SERVER);
    assert.equal(root.parentSpanId, '');
    assert.equal(root.attributes['http.route'], '/v1/invoices');
    assert.equal(attempt.serviceName, 'faktura-workflows');
    assert.equal(attempt.attributes['restate.invocation.target'], `InvoiceMail/${invoiceId}/deliver`);

    // The SMTP call under the mail step, linked up to the API's root through its parents.
    const smtpSpan = trace.find((s) => s.name === 'smtp send')!;
    assert.equal(smtpSpan.kind, CLIENT);
    assert.equal(smtpSpan.attributes['server.address'], '127.0.0.1');
    assert.deepEqual(
      ancestry(trace, smtpSpan).map((s) => `${s.serviceName}:${s.name}`),
      [
        'faktura-workflows:smtp send',
        'faktura-workflows:run (mail)',
        `faktura-workflows:attempt InvoiceMail/${invoiceId}/deliver`,
        // restate-server's own spans (service.name "Restate"), relayed from OTLP/gRPC.
        'Restate:invocation-attempt InvoiceMail/{key}/deliver',
        'Restate:invocation-start InvoiceMail/{key}/deliver',
        'Restate:ingress InvoiceMail/{key}/deliver',
        'faktura-api:POST InvoiceMail/deliver/send',
        'faktura-api:POST /v1/invoices',
      ],
    );
    assert.equal(relay!.stats().failed, 0);

    // Every span of the trace hangs from that root, and none carries an address, an amount or a key.
    for (const s of trace) assert.equal(ancestry(trace, s).at(-1), root);
    const attributes = JSON.stringify(trace.map((s) => s.attributes));
    assert.doesNotMatch(attributes, /ap@kunde\.dk|Rugbrød|4500|Bearer|sk_test_/);

    // SQL: units of work under the request and under the steps, named by statement and table, no values.
    const sql = trace.filter((s) => s.attributes['db.system'] === 'postgresql');
    assert.ok(sql.some((s) => s.serviceName === 'faktura-api' && s.name.startsWith('transaction ')), sql.map((s) => s.name).join(', '));
    assert.ok(sql.some((s) => s.serviceName === 'faktura-workflows' && s.name === 'SELECT invoice_sends'), sql.map((s) => s.name).join(', '));
    for (const s of sql) assert.match(s.name, /^(transaction )?[A-Z]+( [a-z_.]+)?$/);

    // The two exporters spoke the two encodings (and the relay protobuf).
    assert.ok(receiver.contentTypes.includes('application/json'));
    assert.ok(receiver.contentTypes.includes('application/x-protobuf'));
  });

  it('log lines carry the trace id: the request line, and the line of each durable step', async () => {
    const { receiver, t, org, workflowLines } = stack;
    const before = receiver.spans.length;
    const res = await call(t.app, 'GET', '/v1/customers?limit=1', { key: org.apiKey });
    assert.equal(res.status, 200);
    const spans = await receiver.waitFor((all) => all.slice(before).some((s) => s.name === 'GET /v1/customers'));
    const span = spans.slice(before).find((s) => s.name === 'GET /v1/customers')!;
    const line = t
      .logs()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { msg: string; trace_id?: string; span_id?: string; req?: { url: string } })
      .find((l) => l.msg === 'request completed' && l.trace_id === span.traceId);
    assert.ok(line, 'the request line carries the trace id of its span');
    assert.equal(line.span_id, span.spanId);

    const mailSpan = receiver.spans.find((s) => s.name === 'run (mail)')!;
    const step = workflowLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'step completed' && l.step === 'mail');
    assert.ok(step, 'the mail step wrote its line');
    assert.equal(step.trace_id, mailSpan.traceId);
    assert.equal(step.span_id, mailSpan.spanId);
  });
});

describe('traces of the pay page', () => {
  it('a SERVER span per request named by its route, continuing the caller\'s trace, with its SQL under it', async () => {
    const receiver = await startOtlpReceiver();
    const tracing = startTracing({ otlpEndpoint: receiver.url, otlpProtocol: 'http/protobuf', otelServiceName: undefined }, 'faktura-pay');
    const pay = await startTestPay({ tracing });
    try {
      assert.equal((await pay.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
      const caller = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' };
      const res = await pay.app.inject({ method: 'GET', url: '/p/no-such-reference', headers: { traceparent: `00-${caller.traceId}-${caller.spanId}-01` } });
      assert.equal(res.statusCode, 404);
      const spans = await receiver.waitFor((all) => all.some((s) => s.name === 'GET /p/:reference'));
      const span = spans.find((s) => s.name === 'GET /p/:reference')!;
      assert.deepEqual(
        { service: span.serviceName, kind: span.kind, traceId: span.traceId, parent: span.parentSpanId, route: span.attributes['http.route'], status: span.attributes['http.response.status_code'] },
        { service: 'faktura-pay', kind: SERVER, traceId: caller.traceId, parent: caller.spanId, route: '/p/:reference', status: 404 },
      );
      // A 4xx is the client's: the span is not an error.
      assert.notEqual(span.statusCode, 2);
      assert.ok(spans.some((s) => s.parentSpanId === span.spanId && s.attributes['db.system'] === 'postgresql'), 'the look-up is a child span');
      assert.doesNotMatch(JSON.stringify(spans), /no-such-reference/);
      const line = pay.logs().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg: string; trace_id?: string }).find((l) => l.trace_id === caller.traceId);
      assert.ok(line, 'the request line carries the trace id');
      // Everything is flushed at the stop: the health probe made no span.
      await tracing.shutdown();
      assert.deepEqual(receiver.spans.filter((s) => s.name.includes('healthz')), []);
    } finally {
      await pay.close();
      await tracing.shutdown();
      await receiver.close();
    }
  });
});

describe('traces through a Restate without tracing', function () {
  this.timeout(60_000);
  let stack: Stack;
  before(async () => {
    stack = await startStack(false);
  });
  after(async () => {
    await stack?.close();
  });

  it('the attempt hangs under the hand-off: the caller\'s traceparent is taken from the invocation\'s headers', async () => {
    const { invoiceId, trace } = await sendOneInvoice(stack);
    assert.deepEqual(
      ancestry(trace, trace.find((s) => s.name === 'smtp send')!).map((s) => `${s.serviceName}:${s.name}`),
      [
        'faktura-workflows:smtp send',
        'faktura-workflows:run (mail)',
        `faktura-workflows:attempt InvoiceMail/${invoiceId}/deliver`,
        'faktura-api:POST InvoiceMail/deliver/send',
        'faktura-api:POST /v1/invoices',
      ],
    );
  });
});

describe('traces switched off', () => {
  it('without OTEL_EXPORTER_OTLP_ENDPOINT nothing is set up, nothing is exported and no log line carries a trace id', async () => {
    const receiver = await startOtlpReceiver();
    const exporters = otlpExportersCreated();
    const tracing = startTracing({ otlpEndpoint: undefined, otlpProtocol: 'http/protobuf', otelServiceName: undefined }, 'faktura-api');
    assert.equal(tracing.enabled, false);
    const t = await startTestApp({ tracing });
    try {
      const org = await createTestOrg();
      // A caller's trace context is not continued either: there is nothing to continue it with.
      const res = await call(t.app, 'GET', '/v1/customers?limit=1', { key: org.apiKey, headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
      assert.equal(res.status, 200);
      await tracing.shutdown();
      assert.equal(otlpExportersCreated(), exporters, 'no exporter was created');
      assert.deepEqual(receiver.spans, []);
      assert.doesNotMatch(t.logs(), /trace_id|span_id/);
    } finally {
      await t.close();
      await receiver.close();
    }
  });
});

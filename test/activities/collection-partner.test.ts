import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { createCollectionPartner } from '../../activities/collections/create-collection-partner.ts';
import { createHttpCollectionPartner } from '../../activities/collections/http-partner.ts';
import { createLocalCollectionPartner, handOverFileContent } from '../../activities/collections/local-partner.ts';
import { loadHandOverDocument } from '../../services/collections/load-hand-over.ts';
import type { HandOverDocument } from '../../services/collections/partner-port.ts';
import { addDays } from '../../services/shared/clock.ts';
import { readConfig } from '../../services/shared/config.ts';
import { DomainError } from '../../services/shared/errors.ts';
import { uuidv7 } from '../../services/shared/ids.ts';
import { newSigningSecret } from '../../services/webhooks/signing.ts';
import { call, createTestOrg, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';
import { issueInvoice } from '../helpers/reminders.ts';

/**
 * The hand-over to the collection partner (services/collections/partner-port.ts): the document read from a case of
 * POST /v1/cases and from an invoice's case, CPR decrypted into it and nowhere else; the local adapter (one JSON file
 * per case, write-once, idempotent); the HTTP adapter against a real receiver on loopback (Standard Webhooks
 * signature, headers, body, what each answer means, the timeout); and how the adapter is chosen from the config.
 */

const CPR = '0707071234';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

interface Receiver {
  url: string;
  received: Received[];
  answer: (req: Received, res: ServerResponse) => void;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const r: Receiver = {
    url: '',
    received,
    answer: (_req, res) => res.writeHead(200).end(),
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const got = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(got);
      r.answer(got, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hand-overs`;
  return r;
}

describe('collection partner: hand-over document and adapters', () => {
  let t: TestApp;
  let org: TestOrg;
  let today: string;
  const sql = () => testDb().db.sql;
  const keyring = () => testDb().keyring;
  /** Every API response and log line of this suite, for the CPR check. */
  const seen: string[] = [];
  const log = (level: string, msg: string, fields?: Record<string, unknown>) => void seen.push(JSON.stringify({ level, msg, fields }));
  let caseDoc: HandOverDocument;

  const api = async (method: string, url: string, body?: unknown) => {
    const res = await call(t.app, method, url, { key: org.apiKey, ...(body === undefined ? {} : { body }) });
    seen.push(res.raw, JSON.stringify(res.headers));
    return res;
  };

  const setPaakrav = (caseId: string, sentOn: string) =>
    sql()`UPDATE collection_cases SET state = 'PAAKRAV_SENDT', paakrav_sent_on = ${sentOn}, paakrav_frist = ${addDays(sentOn, 10)}
          WHERE organization_id = ${org.organizationId} AND id = ${caseId}`;

  before(async () => {
    t = await startTestApp();
    org = await createTestOrg({ name: 'Inkasso Kreditor A/S', cvr: '27182818' });
    today = (await api('GET', '/v1/test-clock')).body.data.today as string;
  });
  after(() => t.close());

  describe('loadHandOverDocument', () => {
    it('a case from POST /v1/cases: its claims and debtors in order, CPR, e-mail, phone and address decrypted', async () => {
      const adresse = { gade: 'Skyldnervej 9', postnummer: '9000', by: 'Aalborg', land: 'Danmark', kommunekode: '0851' };
      const externalReference = `overdragelse-${process.pid}`;
      const res = await api('POST', '/v1/cases', {
        externalReference,
        fordringer: [
          { hovedstolOere: 450_000, forfaldsdato: addDays(today, -60), fakturadato: addDays(today, -74), beskrivelse: 'Faktura 77, rådgivning' },
          { hovedstolOere: 12_345, forfaldsdato: addDays(today, -30) },
        ],
        skyldnere: [
          { skyldnerType: 'person', navn: 'Jens Skyldner', cpr: CPR, email: 'jens.skyldner@privat-eksempel.dk', mobil: '+4522334455', adresse },
          { skyldnerType: 'virksomhed', navn: 'Skyldner Invest ApS', cvr: '76543210' },
        ],
      });
      assert.equal(res.status, 201, res.raw);
      const caseId = res.body.data.id as string;
      const caseNumber = res.body.data.caseNumber as number;

      // No påkrav yet: nothing to hand over.
      await assert.rejects(loadHandOverDocument(sql(), keyring(), org.organizationId, caseId, today), /has no påkrav date/);
      const sentOn = addDays(today, -11);
      await setPaakrav(caseId, sentOn);

      caseDoc = (await loadHandOverDocument(sql(), keyring(), org.organizationId, caseId, today))!;
      assert.deepEqual(caseDoc, {
        handOverId: `${org.organizationId}:${caseId}`,
        organization: { id: org.organizationId, name: 'Inkasso Kreditor A/S', cvr: '27182818' },
        case: { id: caseId, caseNumber, externalReference, invoiceId: null, invoiceNumber: null },
        paakrav: { sentOn, deadline: addDays(sentOn, 10) },
        handedOverOn: today,
        claims: [
          { principalOere: 450_000, dueDate: addDays(today, -60), invoiceDate: addDays(today, -74), description: 'Faktura 77, rådgivning', feesOere: 0, interestOere: 0, interestRateBp: null, compensationOere: 0, paidOere: 0 },
          { principalOere: 12_345, dueDate: addDays(today, -30), invoiceDate: null, description: null, feesOere: 0, interestOere: 0, interestRateBp: null, compensationOere: 0, paidOere: 0 },
        ],
        debtors: [
          { type: 'person', name: 'Jens Skyldner', cvr: null, cpr: CPR, address: adresse, email: 'jens.skyldner@privat-eksempel.dk', phone: '+4522334455' },
          { type: 'virksomhed', name: 'Skyldner Invest ApS', cvr: '76543210', cpr: null, address: null, email: null, phone: null },
        ],
        outstandingOere: 462_345,
      });

      // The status read and the case's events never carry it; nor does any stored column in clear text.
      seen.push((await api('GET', `/v1/cases/${caseId}`)).raw);
      const events = await sql()<{ data: unknown }[]>`SELECT data FROM events WHERE organization_id = ${org.organizationId} AND entity_id = ${caseId}`;
      assert.ok(events.length > 0);
      assert.ok(!JSON.stringify(events).includes(CPR), 'an event carries the CPR number');
      const [row] = await sql()<{ cpr_enc: Buffer }[]>`SELECT cpr_enc FROM case_debtors WHERE case_id = ${caseId} AND position = 0`;
      assert.ok(!row!.cpr_enc.includes(Buffer.from(CPR)));
      // Unknown or another organisation's case: undefined.
      assert.equal(await loadHandOverDocument(sql(), keyring(), org.organizationId, uuidv7(), today), undefined);
      const other = await createTestOrg();
      assert.equal(await loadHandOverDocument(sql(), keyring(), other.organizationId, caseId, today), undefined);
    });

    it('a case from an invoice: the invoice as the claim (gross, fees, paid + credited, dates), the customer as the debtor', async () => {
      const inv = await issueInvoice(t, org, {
        type: 'company', name: 'Kunde Kredit ApS', cvr: '11223344', email: 'bogholderi@kunde-kredit.dk', phone: '+4588776655',
        address: { street: 'Kundevej 12', postalCode: '7100', city: 'Vejle' },
      }, 200_000);
      await sql()`INSERT INTO invoice_fees (id, organization_id, invoice_id, customer_id, kind, amount_oere)
                  VALUES (${uuidv7()}, ${org.organizationId}, ${inv.invoiceId}, ${inv.customerId}, 'reminder', 10000)`;
      const pay = await api('POST', `/v1/invoices/${inv.invoiceId}/payments`, { amountOere: 50_000, paymentDate: addDays(today, -2) });
      assert.equal(pay.status, 201, pay.raw);
      const caseId = uuidv7();
      const sentOn = addDays(today, -11);
      await sql()`INSERT INTO collection_cases (organization_id, id, case_number, invoice_id, state, paakrav_sent_on, paakrav_frist)
                  VALUES (${org.organizationId}, ${caseId}, 9002, ${inv.invoiceId}, 'PAAKRAV_SENDT', ${sentOn}, ${addDays(sentOn, 10)})`;
      const [dates] = await sql()<{ issue_date: string; due_date: string }[]>`
        SELECT issue_date::text, due_date::text FROM invoices WHERE id = ${inv.invoiceId}`;

      const doc = await loadHandOverDocument(sql(), keyring(), org.organizationId, caseId, today);
      assert.deepEqual(doc, {
        handOverId: `${org.organizationId}:${caseId}`,
        organization: { id: org.organizationId, name: 'Inkasso Kreditor A/S', cvr: '27182818' },
        case: { id: caseId, caseNumber: 9002, externalReference: null, invoiceId: inv.invoiceId, invoiceNumber: inv.number },
        paakrav: { sentOn, deadline: addDays(sentOn, 10) },
        handedOverOn: today,
        claims: [{ principalOere: 200_000, dueDate: dates!.due_date, invoiceDate: dates!.issue_date, description: `Faktura nr. ${inv.number}`, feesOere: 10_000, interestOere: 0, interestRateBp: null, compensationOere: 0, paidOere: 50_000 }],
        debtors: [{
          type: 'virksomhed', name: 'Kunde Kredit ApS', cvr: '11223344', cpr: null,
          address: { gade: 'Kundevej 12', postnummer: '7100', by: 'Vejle' }, email: 'bogholderi@kunde-kredit.dk', phone: '+4588776655',
        }],
        outstandingOere: 160_000,
      });

      // A customer's stored CPR is decrypted into the document too.
      await sql()`UPDATE customers SET cpr_enc = ${keyring().encrypt(CPR)} WHERE id = ${inv.customerId}`;
      const withCpr = await loadHandOverDocument(sql(), keyring(), org.organizationId, caseId, today);
      assert.equal(withCpr!.debtors[0]!.cpr, CPR);
    });
  });

  describe('local adapter', () => {
    it('writes <caseId>.json with the document as pretty JSON; the same again succeeds; other content is refused, never overwritten', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'faktura-test-collections-'));
      const partner = createLocalCollectionPartner(dir, log);
      const path = join(dir, `${caseDoc.case.id}.json`);
      assert.deepEqual(await partner.handOver(caseDoc), { reference: path });
      const content = readFileSync(path, 'utf8');
      assert.equal(content, `${JSON.stringify(caseDoc, null, 2)}\n`);
      assert.equal(content, handOverFileContent(caseDoc));
      assert.deepEqual(JSON.parse(content), caseDoc);
      const written = statSync(path).mtimeMs;

      // The same hand-over again (also twice at once): success, the file untouched.
      const again = await Promise.all([partner.handOver(caseDoc), partner.handOver(structuredClone(caseDoc))]);
      assert.deepEqual(again, [{ reference: path }, { reference: path }]);
      assert.deepEqual(await createLocalCollectionPartner(dir, log).handOver(caseDoc), { reference: path });
      assert.equal(statSync(path).mtimeMs, written);

      // Other content under the same id: refused for good, the first document stays.
      await assert.rejects(
        createLocalCollectionPartner(dir, log).handOver({ ...caseDoc, handedOverOn: addDays(caseDoc.handedOverOn, 1) }),
        (err: unknown) => err instanceof DomainError && err.code === 'collection_partner_rejected',
      );
      assert.equal(readFileSync(path, 'utf8'), content);
      assert.deepEqual(readdirSync(dir), [`${caseDoc.case.id}.json`]);
    });
  });

  describe('HTTP adapter', () => {
    let receiver: Receiver;
    const secret = newSigningSecret();
    const partner = (timeoutMs?: number) => createHttpCollectionPartner({ url: receiver.url, secret, log, ...(timeoutMs ? { timeoutMs } : {}) });

    beforeEach(async () => {
      receiver = await startReceiver();
    });
    afterEach(() => receiver.close());

    it('POSTs the document as JSON, signed per Standard Webhooks, with the handOverId as webhook-id and Idempotency-Key', async () => {
      receiver.answer = (_req, res) => res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ reference: 'PARTNER-4711' }));
      assert.deepEqual(await partner().handOver(caseDoc), { reference: 'PARTNER-4711' });
      assert.equal(receiver.received.length, 1);
      const got = receiver.received[0]!;
      assert.equal(got.method, 'POST');
      assert.equal(got.url, '/hand-overs');
      assert.equal(got.headers['content-type'], 'application/json');
      assert.equal(got.headers['idempotency-key'], caseDoc.handOverId);
      assert.equal(got.headers['webhook-id'], caseDoc.handOverId);
      assert.match(String(got.headers['webhook-timestamp']), /^\d{10}$/);
      assert.ok(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
      assert.match(String(got.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
      assert.equal(got.headers.authorization, undefined);
      assert.deepEqual(JSON.parse(got.body), caseDoc);
      // The receiver's check: the standardwebhooks library verifies the signature (and refuses another secret).
      const headers = { 'webhook-id': String(got.headers['webhook-id']), 'webhook-timestamp': String(got.headers['webhook-timestamp']), 'webhook-signature': String(got.headers['webhook-signature']) };
      assert.deepEqual(new Webhook(secret).verify(got.body, headers), caseDoc);
      assert.throws(() => new Webhook(newSigningSecret()).verify(got.body, headers));
      assert.throws(() => new Webhook(secret).verify(got.body.replace('"handedOverOn"', '"handedOverOn" '), headers));
    });

    it('a 2xx without a JSON reference answers the handOverId', async () => {
      receiver.answer = (_req, res) => res.writeHead(204).end();
      assert.deepEqual(await partner().handOver(caseDoc), { reference: caseDoc.handOverId });
      receiver.answer = (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      assert.deepEqual(await partner().handOver(caseDoc), { reference: caseDoc.handOverId });
    });

    it('a 4xx is a terminal collection_partner_rejected; 5xx, 408, 425, 429 and a redirect are retryable Errors', async () => {
      receiver.answer = (_req, res) => res.writeHead(422, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'debtor address incomplete' } }));
      await assert.rejects(partner().handOver(caseDoc), (err: unknown) => {
        assert.ok(err instanceof DomainError);
        assert.equal(err.code, 'collection_partner_rejected');
        assert.match(err.message, /422 debtor address incomplete/);
        return true;
      });
      for (const status of [500, 503, 408, 425, 429]) {
        receiver.answer = (_req, res) => res.writeHead(status).end('busy');
        await assert.rejects(partner().handOver(caseDoc), (err: unknown) => {
          assert.ok(!(err instanceof DomainError), `${status} is terminal`);
          assert.match((err as Error).message, new RegExp(`answered ${status}`));
          return true;
        });
      }
      receiver.answer = (req, res) => res.writeHead(307, { location: `${receiver.url}/elsewhere` }).end();
      const before = receiver.received.length;
      await assert.rejects(partner().handOver(caseDoc), (err: unknown) => !(err instanceof DomainError) && /answered 307/.test((err as Error).message));
      assert.equal(receiver.received.length, before + 1, 'the redirect was followed');
    });

    it('no answer within the timeout, or nobody listening, is a retryable Error', async () => {
      receiver.answer = () => {};
      await assert.rejects(partner(300).handOver(caseDoc), (err: unknown) => !(err instanceof DomainError) && /no answer within 300 ms/.test((err as Error).message));
      const url = receiver.url;
      await receiver.close();
      const gone = createHttpCollectionPartner({ url, secret, log });
      await assert.rejects(gone.handOver(caseDoc), (err: unknown) => !(err instanceof DomainError) && /failed/.test((err as Error).message));
      receiver = await startReceiver();
    });
  });

  describe('choosing the adapter', () => {
    it('local under DATA_DIR/collections without COLLECTION_PARTNER_URL; HTTP with it; its secret required and never echoed', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'faktura-test-data-'));
      const local = createCollectionPartner({ collectionPartnerUrl: undefined, collectionPartnerSecret: undefined, dataDir }, log);
      assert.deepEqual(await local.handOver(caseDoc), { reference: join(dataDir, 'collections', `${caseDoc.case.id}.json`) });

      assert.throws(() => createCollectionPartner({ collectionPartnerUrl: 'https://partner.example/in', collectionPartnerSecret: undefined, dataDir }, log), /COLLECTION_PARTNER_SECRET is required/);
      const secret = newSigningSecret();
      const lines = seen.length;
      createCollectionPartner({ collectionPartnerUrl: 'https://partner.example/in', collectionPartnerSecret: secret, dataDir }, log);
      assert.ok(!seen.slice(lines).join('\n').includes(secret.slice(6)), 'the secret was logged');

      assert.throws(() => readConfig({ COLLECTION_PARTNER_URL: 'https://partner.example/in' }), /COLLECTION_PARTNER_SECRET must be set/);
      const bad = 'whsec_c2hvcnQ=';
      assert.throws(() => readConfig({ COLLECTION_PARTNER_URL: 'https://partner.example/in', COLLECTION_PARTNER_SECRET: bad }), (err: unknown) => {
        assert.match((err as Error).message, /whsec_ followed by base64 of 24 to 64 random bytes/);
        assert.ok(!(err as Error).message.includes(bad));
        return true;
      });
      const config = readConfig({ COLLECTION_PARTNER_URL: 'https://partner.example/in', COLLECTION_PARTNER_SECRET: secret });
      assert.deepEqual([config.collectionPartnerUrl, config.collectionPartnerSecret], ['https://partner.example/in', secret]);
      const unset = readConfig({});
      assert.deepEqual([unset.collectionPartnerUrl, unset.collectionPartnerSecret], [undefined, undefined]);
    });

    it('the CPR number reached no API response and no log line of this suite', () => {
      assert.ok(seen.length > 10);
      for (const s of seen) assert.ok(!s.includes(CPR), `CPR in: ${s.slice(0, 200)}`);
    });
  });
});

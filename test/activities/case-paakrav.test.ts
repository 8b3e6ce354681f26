import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deliverCasePaakrav, type CasePaakravDeliveryDeps } from '../../activities/collections/deliver-case-paakrav.ts';
import { createLocalLetterService } from '../../activities/letters/local-letters.ts';
import { createSmtpMailer } from '../../activities/mail/smtp-mailer.ts';
import { loadCasePaakravView } from '../../services/cases/case-paakrav-document.ts';
import { renderCasePaakrav } from '../../services/cases/render-case-paakrav.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import type { PdfRenderer } from '../../services/documents/pdf-renderer.ts';
import { addDays } from '../../services/shared/clock.ts';
import { uuidv7 } from '../../services/shared/ids.ts';
import { call, createTestOrg, startTestApp, testDb, testRenderer, type TestApp, type TestOrg } from '../helpers/context.ts';
import { header, onlyLeaf, parseMime } from '../helpers/mime.ts';
import { smtpReply, startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';
import { pdfText } from '../helpers/pdf-text.ts';
import { issueInvoice } from '../helpers/reminders.ts';
import { metricValue } from '../helpers/metrics.ts';

/**
 * A collection case's own påkrav (Inkassoloven § 10): the document through real Chromium, read back with pdftotext;
 * its delivery by mail through a real SMTP server on loopback, by letter (local letters in a temp dir) when no
 * debtor has an e-mail, and refused when nobody can be reached. Cases from POST /v1/cases and from an invoice.
 */

const FROM = 'no-reply@faktura.invalid';
const CPR = '0707071234';

/** The PDF's text on one line: pdftotext breaks lines where the layout wraps them. */
const flatText = async (pdf: Buffer): Promise<string> => (await pdfText(pdf)).replace(/\s+/g, ' ');

/** DD-MM-YYYY, as the Danish documents print dates. */
const da = (d: string): string => d.split('-').reverse().join('-');

describe('case påkrav: document and delivery', () => {
  let t: TestApp;
  let org: TestOrg;
  let today: string;
  let letterDir: string;
  const documents = createPostgresDocumentStore();
  const sql = () => testDb().db.sql;
  let refCounter = 0;

  const deps = (sink: SmtpSink | undefined): CasePaakravDeliveryDeps => ({
    ...testDb(),
    documents,
    mailer: sink ? createSmtpMailer(sink.url, () => {}) : { send: () => Promise.reject(new Error('no mail in this test')) },
    letters: createLocalLetterService(letterDir, () => {}),
    fromAddress: FROM,
  });

  async function createCase(body: Record<string, unknown>): Promise<string> {
    const res = await call(t.app, 'POST', '/v1/cases', { key: org.apiKey, body: { externalReference: `paakrav-${process.pid}-${++refCounter}`, ...body } });
    assert.equal(res.status, 201, res.raw);
    return res.body.data.id as string;
  }

  const render = (caseId: string) => renderCasePaakrav({ ...testDb(), pdf: testRenderer(), documents }, org.organizationId, caseId, today);
  const storedPdf = async (sha: string) => (await documents.get(sql(), org.organizationId, Buffer.from(sha, 'hex')))!.bytes;

  before(async () => {
    t = await startTestApp();
    org = await createTestOrg({
      name: 'Udlejning Kastrup ApS', cvr: '31415926', street: 'Havnegade 4', postalCode: '2300', city: 'København S',
      email: 'opkraevning@kastrup-udlejning.dk', bankReg: '5301', bankAccount: '0004567891',
    });
    today = (await call(t.app, 'GET', '/v1/test-clock', { key: org.apiKey })).body.data.today as string;
    letterDir = mkdtempSync(join(tmpdir(), 'faktura-test-paakrav-letters-'));
  });
  after(() => t.close());

  it('prints creditor, debtors, each claim, fees, total, deadline, the collection warning and the bank details (Danish)', async () => {
    const caseId = await createCase({
      fordringer: [
        { hovedstolOere: 1_250_000, forfaldsdato: addDays(today, -40), fakturadato: addDays(today, -54), beskrivelse: 'Husleje marts, lejemål 4. th.' },
        { hovedstolOere: 37_550, forfaldsdato: addDays(today, -12) },
      ],
      skyldnere: [
        { skyldnerType: 'person', navn: 'Mette Sørensen', cpr: CPR, email: 'mette.s@privat-eksempel.dk', mobil: '+4520304050',
          adresse: { gade: 'Æblevej 7, 1. tv.', postnummer: '8200', by: 'Aarhus N', land: 'Danmark' } },
        { skyldnerType: 'virksomhed', navn: 'Sørensen Holding ApS', cvr: '87654321' },
      ],
    });
    const { sha256 } = await render(caseId);
    assert.match(sha256, /^[0-9a-f]{64}$/);
    const pdf = await storedPdf(sha256);
    assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
    const text = await flatText(pdf);
    const deadline = da(addDays(today, 10));

    for (const expected of [
      'Påkrav', 'inkassolovens § 10',
      // Creditor: name, address, CVR, e-mail.
      'Udlejning Kastrup ApS', 'Havnegade 4', '2300 København S', 'CVR-nr. 31415926', 'opkraevning@kastrup-udlejning.dk',
      // Debtors: names and addresses; a company's CVR.
      'Mette Sørensen', 'Æblevej 7, 1. tv.', '8200 Aarhus N', 'Sørensen Holding ApS', 'CVR-nr. 87654321',
      // Each claim: description, invoice date, due date, principal.
      'Husleje marts, lejemål 4. th.', da(addDays(today, -54)), da(addDays(today, -40)), '12.500,00 kr.',
      'Krav 2', da(addDays(today, -12)), '375,50 kr.',
      // Total, date, deadline.
      'Hovedstol i alt 12.875,50 kr.', 'I alt at betale 12.875,50 kr.', `Dato ${da(today)}`, `Betalingsfrist ${deadline}`,
      `senest ${deadline}`,
      // The warning with the collection fee and its basis.
      'Varsel om inkasso', 'overdrager vi kravet til inkasso', 'inkassogebyr på 100,00 kr.', 'rentelovens § 9 b, stk. 3',
      // How to pay.
      'Reg.nr. 5301', 'Kontonr. 0004567891',
    ]) {
      assert.ok(text.includes(expected), `the påkrav lacks ${JSON.stringify(expected)}:\n${text}`);
    }
    // Fees and payments show only when there are any; CPR, e-mail and phone are never printed.
    assert.ok(!text.includes('Rykkergebyrer'));
    for (const secret of [CPR, '070707', 'mette.s@', '20304050']) assert.ok(!text.includes(secret), `the påkrav prints ${secret}`);
  });

  it('the same PDF stored twice is one document with one hash', async () => {
    const caseId = await createCase({
      fordringer: [{ hovedstolOere: 10_000, forfaldsdato: addDays(today, -5) }],
      skyldnere: [{ skyldnerType: 'person', navn: 'Bo Berg' }],
    });
    const bytes = Buffer.from(`%PDF-1.4 fixed ${caseId}\n`);
    const fixed: PdfRenderer = { render: () => Promise.resolve(bytes), close: () => Promise.resolve() };
    const d = { ...testDb(), pdf: fixed, documents };
    const first = await renderCasePaakrav(d, org.organizationId, caseId, today);
    const second = await renderCasePaakrav(d, org.organizationId, caseId, today);
    assert.deepEqual(second, first);
    const [n] = await sql()<{ n: number }[]>`SELECT count(*)::int AS n FROM documents WHERE sha256 = ${Buffer.from(first.sha256, 'hex')}`;
    assert.equal(n!.n, 1);
    // An unknown case is an Error, not an empty document.
    await assert.rejects(renderCasePaakrav(d, org.organizationId, uuidv7(), today), /has no påkrav to render/);
  });

  it('mails the påkrav to the first debtor with an e-mail: Message-ID of the case, the stored PDF attached', async () => {
    const caseId = await createCase({
      fordringer: [{ hovedstolOere: 99_900, forfaldsdato: addDays(today, -20), beskrivelse: 'Abonnement' }],
      skyldnere: [
        { skyldnerType: 'person', navn: 'Uden Mail', adresse: { gade: 'Vej 1', postnummer: '1000', by: 'København K' } },
        { skyldnerType: 'person', navn: 'Karin Lund', email: 'karin.lund@privat-eksempel.dk', cpr: CPR },
      ],
    });
    const { sha256 } = await render(caseId);
    const sink = await startSmtpSink();
    try {
      const sent = await deliverCasePaakrav(deps(sink), org.organizationId, caseId, sha256);
      assert.deepEqual(sent, { kind: 'sent', channel: 'email', reference: `case-paakrav-${caseId}@faktura.invalid` });
      assert.equal(sink.received.length, 1);
      const msg = parseMime(sink.received[0]!);
      assert.equal(header(msg, 'Message-ID'), `<case-paakrav-${caseId}@faktura.invalid>`);
      assert.equal(header(msg, 'To'), 'karin.lund@privat-eksempel.dk');
      assert.equal(header(msg, 'From'), `Udlejning Kastrup ApS <${FROM}>`);
      assert.equal(header(msg, 'Reply-To'), 'opkraevning@kastrup-udlejning.dk');
      const caseNumber = (await sql()<{ n: number }[]>`SELECT case_number AS n FROM collection_cases WHERE id = ${caseId}`)[0]!.n;
      assert.equal(header(msg, 'Subject'), `Påkrav fra Udlejning Kastrup ApS (sag nr. ${caseNumber})`);
      const attachment = onlyLeaf(msg, 'application/pdf');
      assert.match(header(attachment, 'Content-Disposition') ?? '', new RegExp(`filename="?paakrav-sag-${caseNumber}\\.pdf"?`));
      assert.ok(attachment.body.equals(await storedPdf(sha256)), 'the attachment is not the stored PDF');
      const text = onlyLeaf(msg, 'text/plain').body.toString('utf8');
      assert.match(text, /Kære Karin Lund,/);
      assert.match(text, /I alt at betale: 999,00 kr\./);
      assert.match(text, /inkassogebyr på 100,00 kr\. efter rentelovens § 9 b, stk\. 3/);
      assert.ok(!sink.received[0]!.includes(Buffer.from(CPR)), 'the CPR number went out in the mail');

      // A retried send is the same mail: same Message-ID.
      const again = await deliverCasePaakrav(deps(sink), org.organizationId, caseId, sha256);
      assert.deepEqual(again, sent);
      assert.equal(header(parseMime(sink.received[1]!), 'Message-ID'), `<case-paakrav-${caseId}@faktura.invalid>`);
    } finally {
      await sink.close();
    }
  });

  it('a recipient refused for good (550) is refused mail_rejected; a transient failure (451) throws', async () => {
    const caseId = await createCase({
      fordringer: [{ hovedstolOere: 5_000, forfaldsdato: addDays(today, -20) }],
      skyldnere: [{ skyldnerType: 'person', navn: 'Ole', email: 'ole@kunde.dk' }],
    });
    const renders = () => metricValue('faktura_pdf_render_seconds_count', { kind: 'casePaakrav' });
    const rendersBefore = await renders();
    const { sha256 } = await render(caseId);
    assert.equal(await renders(), rendersBefore + 1, 'the render is timed under its document kind');
    const mails = () => Promise.all((['refused', 'failed', 'sent'] as const).map((outcome) => metricValue('faktura_document_deliveries_total', { channel: 'email', outcome })));
    const mailsBefore = await mails();
    const refusing = await startSmtpSink({ onRcptTo: (a, _s, cb) => cb(smtpReply(550, `5.1.1 <${a.address}>: Recipient address rejected`)) });
    try {
      const refused = await deliverCasePaakrav(deps(refusing), org.organizationId, caseId, sha256);
      assert.equal(refused.kind, 'refused');
      assert.equal(refused.kind === 'refused' && refused.code, 'mail_rejected');
    } finally {
      await refusing.close();
    }
    const later = await startSmtpSink({ onRcptTo: (_a, _s, cb) => cb(smtpReply(451, '4.3.0 try again later')) });
    try {
      await assert.rejects(deliverCasePaakrav(deps(later), org.organizationId, caseId, sha256), /451|try again/);
    } finally {
      await later.close();
    }
    // One refused for good, one failed for a retry, none sent.
    assert.deepEqual((await mails()).map((n, i) => n - mailsBefore[i]!), [1, 1, 0]);
  });

  it('without an e-mail, posts a letter to the first debtor with an address; nobody reachable is refused debtor_unreachable', async () => {
    const caseId = await createCase({
      fordringer: [{ hovedstolOere: 20_000, forfaldsdato: addDays(today, -20) }],
      skyldnere: [
        { skyldnerType: 'person', navn: 'Ingen Adresse' },
        { skyldnerType: 'person', navn: 'Peter Holm', cpr: CPR, adresse: { gade: 'Lindevej 3', postnummer: '5000', by: 'Odense C' } },
      ],
    });
    const { sha256 } = await render(caseId);
    const outcomes = () =>
      Promise.all([metricValue('faktura_document_deliveries_total', { channel: 'letter', outcome: 'sent' }), metricValue('faktura_document_deliveries_total', { channel: 'none', outcome: 'refused' })]);
    const before = await outcomes();
    const sent = await deliverCasePaakrav(deps(undefined), org.organizationId, caseId, sha256);
    const letterId = `case-paakrav-${caseId}`;
    assert.deepEqual(sent, { kind: 'sent', channel: 'letter', reference: letterId });
    assert.deepEqual(readdirSync(letterDir).filter((n) => n.startsWith(letterId)).sort(), [`${letterId}.json`, `${letterId}.pdf`]);
    assert.ok(readFileSync(join(letterDir, `${letterId}.pdf`)).equals(await storedPdf(sha256)));
    const sidecar = JSON.parse(readFileSync(join(letterDir, `${letterId}.json`), 'utf8'));
    assert.deepEqual(sidecar.recipient, { name: 'Peter Holm', street: 'Lindevej 3', postalCode: '5000', city: 'Odense C', country: 'DK' });
    assert.equal(sidecar.documentSha256, sha256);
    // Again: the same letter, not a second one.
    assert.deepEqual(await deliverCasePaakrav(deps(undefined), org.organizationId, caseId, sha256), sent);

    const nobody = await createCase({
      fordringer: [{ hovedstolOere: 20_000, forfaldsdato: addDays(today, -20) }],
      skyldnere: [{ skyldnerType: 'person', navn: 'Ukendt', adresse: { gade: 'Kun en gade 1' } }],
    });
    const rendered = await render(nobody);
    const refused = await deliverCasePaakrav(deps(undefined), org.organizationId, nobody, rendered.sha256);
    assert.deepEqual(refused, { kind: 'refused', code: 'debtor_unreachable', reason: 'no debtor has an e-mail address or a street, postal code and city' });
    // Two letters handed to the letter service (the same one twice), and one document with nobody to take it.
    assert.deepEqual((await outcomes()).map((n, i) => n - before[i]!), [2, 1]);
  });

  it('an invoice case: the invoice as the claim with fees and payments, in the customer\'s language, mailed or posted to the customer', async () => {
    const inv = await issueInvoice(t, org, {
      type: 'company', name: 'Nordic Trading Ltd', cvr: '11223344', language: 'en', email: 'ap@nordic-trading.example',
      address: { street: 'Main Street 5', postalCode: '2100', city: 'København Ø' },
    }, 80_000);
    // A reminder fee and a part payment on the invoice, as the engine and the payment flow write them.
    await sql()`INSERT INTO invoice_fees (id, organization_id, invoice_id, customer_id, kind, amount_oere)
                VALUES (${uuidv7()}, ${org.organizationId}, ${inv.invoiceId}, ${inv.customerId}, 'reminder', 10000)`;
    const pay = await call(t.app, 'POST', `/v1/invoices/${inv.invoiceId}/payments`, { key: org.apiKey, body: { amountOere: 30_000, paymentDate: addDays(today, -1) } });
    assert.equal(pay.status, 201, pay.raw);
    const caseId = uuidv7();
    await sql()`INSERT INTO collection_cases (organization_id, id, case_number, invoice_id, state)
                VALUES (${org.organizationId}, ${caseId}, 9001, ${inv.invoiceId}, 'OPRETTET')`;

    const view = await loadCasePaakravView(sql(), testDb().keyring, org.organizationId, caseId, today);
    assert.equal(view?.language, 'en');
    assert.deepEqual([view?.feesOere, view?.paidOere, view?.totalOere, view?.paymentReference], [10_000, 30_000, 60_000, String(inv.number)]);

    const { sha256 } = await render(caseId);
    const text = await flatText(await storedPdf(sha256));
    for (const expected of [
      'Demand for payment', 'Nordic Trading Ltd', 'Main Street 5', '2100 København Ø', 'CVR no. 11223344',
      `Invoice no. ${inv.number}`, 'DKK 800.00', 'Reminder fees DKK 100.00', 'Paid and credited DKK -300.00', 'Total to pay DKK 600.00',
      `Payment deadline ${addDays(today, 10)}`, 'collection fee of DKK 100.00', 'section 9 b(3)', 'Udlejning Kastrup ApS', 'CVR no. 31415926',
    ]) {
      assert.ok(text.includes(expected), `the påkrav lacks ${JSON.stringify(expected)}:\n${text}`);
    }

    const sink = await startSmtpSink();
    try {
      const sent = await deliverCasePaakrav(deps(sink), org.organizationId, caseId, sha256);
      assert.deepEqual(sent, { kind: 'sent', channel: 'email', reference: `case-paakrav-${caseId}@faktura.invalid` });
      const msg = parseMime(sink.received[0]!);
      assert.equal(header(msg, 'To'), 'ap@nordic-trading.example');
      assert.equal(header(msg, 'Subject'), `Demand for payment from Udlejning Kastrup ApS (invoice no. ${inv.number})`);
    } finally {
      await sink.close();
    }

    // The customer without an e-mail: a letter to its address.
    await sql()`UPDATE customers SET email_enc = NULL, email_bidx = NULL WHERE id = ${inv.customerId}`;
    const posted = await deliverCasePaakrav(deps(undefined), org.organizationId, caseId, sha256);
    assert.deepEqual(posted, { kind: 'sent', channel: 'letter', reference: `case-paakrav-${caseId}` });
    const sidecar = JSON.parse(readFileSync(join(letterDir, `case-paakrav-${caseId}.json`), 'utf8'));
    assert.deepEqual(sidecar.recipient, { name: 'Nordic Trading Ltd', street: 'Main Street 5', postalCode: '2100', city: 'København Ø', country: 'DK' });
  });
});

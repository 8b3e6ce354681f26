import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { requestFingerprint } from '../../services/idempotency/request-fingerprint.ts';
import { createPostgresDocumentStore } from '../../services/documents/postgres-document-store.ts';
import { finishIssue } from '../../services/invoices/finish-issue.ts';
import { reserveIssue } from '../../services/invoices/issue-invoice.ts';
import { renderPaymentReceipt } from '../../services/payments/render-receipt.ts';
import { renderReminderDocument } from '../../services/reminders/render-reminder.ts';
import { call, createTestOrg, newIdempotencyKey, startTestApp, testClock, testDb, testRenderer, type TestApp, type TestOrg } from '../helpers/context.ts';
import { issueInvoice } from '../helpers/reminders.ts';

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** The images a PDF embeds, as `pdfimages -list` (Debian's poppler-utils) lists them: width and height of each. */
async function pdfImages(pdf: Buffer): Promise<{ width: number; height: number }[]> {
  const dir = mkdtempSync(join(tmpdir(), 'branding-pdf-'));
  try {
    const file = join(dir, 'doc.pdf');
    writeFileSync(file, pdf);
    const { stdout } = await promisify(execFile)('pdfimages', ['-list', file]);
    // Two header lines, then one line per image: page num type width height …
    return stdout
      .split('\n')
      .slice(2)
      .filter((l) => l.trim() !== '')
      .map((l) => {
        const cols = l.trim().split(/\s+/);
        return { width: Number(cols[3]), height: Number(cols[4]) };
      });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Pixels of the first page (rasterised by pdftoppm at 50 dpi) in the SVG logo's green, #00aa55. */
async function greenPixels(pdf: Buffer): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'branding-pdf-'));
  try {
    const file = join(dir, 'doc.pdf');
    writeFileSync(file, pdf);
    await promisify(execFile)('pdftoppm', ['-png', '-r', '50', '-f', '1', '-l', '1', '-singlefile', file, join(dir, 'page')]);
    const { data, info } = await sharp(join(dir, 'page.png')).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    let n = 0;
    for (let i = 0; i < data.length; i += info.channels) {
      if (Math.abs(data[i]! - 0x00) < 12 && Math.abs(data[i + 1]! - 0xaa) < 12 && Math.abs(data[i + 2]! - 0x55) < 12) n++;
    }
    return n;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The light logo on documents (docs/api-conventions.md, "Branding"): invoices, credit notes, reminders and receipts
 * issued after an upload print it, read back from the stored PDF with pdfimages; a document keeps the logo of its
 * issue, also when its PDF is rendered after the logo changed (an issue's reservation, a reminder or a receipt rendered
 * after their commit), and a stored PDF never changes.
 */
describe('branding on documents', function () {
  this.timeout(60_000);
  let t: TestApp;
  const documents = createPostgresDocumentStore();
  const deps = () => ({ ...testDb(), pdf: testRenderer(), documents, mailDomain: 'faktura.invalid' });
  let logo: Buffer;
  let other: Buffer;

  before(async () => {
    t = await startTestApp();
    // Sizes no other part of a document has, so the images found are the logo's.
    logo = await sharp({ create: { width: 360, height: 120, channels: 3, background: { r: 10, g: 80, b: 160 } } }).png().toBuffer();
    other = await sharp({ create: { width: 90, height: 270, channels: 3, background: { r: 200, g: 40, b: 40 } } }).jpeg().toBuffer();
  });
  after(() => t.close());

  const upload = async (org: TestOrg, image: Buffer, mime: string) => {
    const res = await call(t.app, 'PUT', '/v1/branding/logo', { key: org.apiKey, body: { data: image.toString('base64'), mime } });
    assert.equal(res.status, 200, res.raw);
  };
  const pdf = async (org: TestOrg, path: string) => {
    const res = await t.app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${org.apiKey}` } });
    assert.equal(res.statusCode, 200, res.body);
    return { bytes: res.rawPayload, etag: String(res.headers.etag) };
  };
  const customer = { type: 'company', name: 'Kunde A/S', cvr: '87654321', email: 'bogholderi@kunde.dk' };

  it('an invoice issued before the upload keeps its stored PDF; invoices and credit notes issued after it print the logo', async () => {
    const org = await createTestOrg();
    const before = await issueInvoice(t, org, customer, 50_000);
    const beforePdf = await pdf(org, `/v1/invoices/${before.invoiceId}/pdf`);
    assert.deepEqual(await pdfImages(beforePdf.bytes), []);

    await upload(org, logo, 'image/png');
    const again = await pdf(org, `/v1/invoices/${before.invoiceId}/pdf`);
    assert.ok(again.bytes.equals(beforePdf.bytes), 'the stored PDF is served unchanged');
    assert.equal(again.etag, beforePdf.etag);
    assert.equal(sha256(again.bytes), beforePdf.etag.replace(/"/g, ''));

    const after = await issueInvoice(t, org, customer, 70_000);
    assert.deepEqual(await pdfImages((await pdf(org, `/v1/invoices/${after.invoiceId}/pdf`)).bytes), [{ width: 360, height: 120 }]);

    const credit = await call(t.app, 'POST', `/v1/invoices/${before.invoiceId}/credit`, { key: org.apiKey, body: { reason: 'Fejl i antal' } });
    assert.equal(credit.status, 201, credit.raw);
    assert.deepEqual(await pdfImages((await pdf(org, `/v1/creditnotes/${credit.body.data.id}/pdf`)).bytes), [{ width: 360, height: 120 }]);

    const recorded = await testDb().db.sql<{ id: string; logo_sha256: string | null }[]>`
      SELECT id, logo_sha256 FROM invoices WHERE organization_id = ${org.organizationId} ORDER BY number`;
    assert.deepEqual(recorded.map((r) => [r.id, r.logo_sha256]), [
      [before.invoiceId, null],
      [after.invoiceId, sha256(logo)],
      [credit.body.data.id, sha256(logo)],
    ]);
    // Still the same bytes after everything else.
    assert.ok((await pdf(org, `/v1/invoices/${before.invoiceId}/pdf`)).bytes.equals(beforePdf.bytes));
  });

  it('an issue renders with the logo of its reservation, even when the logo changed before the PDF was rendered', async () => {
    const org = await createTestOrg();
    const c = await call(t.app, 'POST', '/v1/customers', { key: org.apiKey, body: customer });
    const line = { description: 'Konsulentydelse', quantity: 1, unitPriceOere: 10_000 };
    const draftIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const d = await call(t.app, 'POST', '/v1/invoices', { key: org.apiKey, body: { customerId: c.body.data.id, lines: [line] } });
      assert.equal(d.status, 201, d.raw);
      draftIds.push(d.body.data.id);
    }
    const [noLogo, withLogo] = draftIds as [string, string];
    const { db, keyring } = testDb();
    const reserve = (id: string) =>
      db.tx((tx) =>
        reserveIssue(tx, { keyring, clock: testClock() }, org.organizationId, id, {}, {
          idempotencyKey: newIdempotencyKey(), requestHash: requestFingerprint(keyring, 'POST', `/v1/invoices/${id}/issue`, undefined),
          responseStatus: 200, responseLocation: null, send: false,
        }),
      );

    // Reserved without a logo, rendered after one was uploaded: no logo.
    await reserve(noLogo);
    await upload(org, logo, 'image/png');
    assert.ok(await finishIssue(deps(), noLogo));
    assert.deepEqual(await pdfImages((await pdf(org, `/v1/invoices/${noLogo}/pdf`)).bytes), []);

    // Reserved with the logo, rendered after it was replaced and then removed: the reservation's logo.
    await reserve(withLogo);
    await upload(org, other, 'image/jpeg');
    assert.equal((await call(t.app, 'DELETE', '/v1/branding/logo', { key: org.apiKey })).status, 204);
    assert.ok(await finishIssue(deps(), withLogo));
    assert.deepEqual(await pdfImages((await pdf(org, `/v1/invoices/${withLogo}/pdf`)).bytes), [{ width: 360, height: 120 }]);
  });

  it('a reminder prints the logo of the day it was taken, whenever its PDF is rendered', async () => {
    const org = await createTestOrg();
    // Issued long past due, so a reminder may be taken at once.
    const inv = await issueInvoice(t, org, customer, 80_000);
    const first = await call(t.app, 'POST', `/v1/invoices/${inv.invoiceId}/reminders`, { key: org.apiKey });
    assert.equal(first.status, 200, first.raw);
    await upload(org, logo, 'image/png');
    const second = await call(t.app, 'POST', `/v1/invoices/${inv.invoiceId}/reminders`, { key: org.apiKey });
    assert.equal(second.status, 200, second.raw);

    const reminders = await testDb().db.sql<{ id: string; reminder_number: number; logo_sha256: string | null }[]>`
      SELECT id, reminder_number, logo_sha256 FROM reminders WHERE organization_id = ${org.organizationId} ORDER BY reminder_number`;
    assert.deepEqual(reminders.map((r) => [r.reminder_number, r.logo_sha256]), [[1, null], [2, sha256(logo)]]);
    const rendered = async (id: string) => {
      assert.deepEqual(await renderReminderDocument(deps(), id), { status: 'rendered' });
      const [row] = await testDb().db.sql<{ document_sha256: Buffer }[]>`SELECT document_sha256 FROM reminders WHERE id = ${id}`;
      return (await documents.get(testDb().db.sql, org.organizationId, row!.document_sha256))!.bytes;
    };
    // Both rendered now, after the upload: the first was taken before it.
    assert.deepEqual(await pdfImages(await rendered(reminders[0]!.id)), []);
    assert.deepEqual(await pdfImages(await rendered(reminders[1]!.id)), [{ width: 360, height: 120 }]);
  });

  it('a receipt prints the logo of the moment its payment was booked', async () => {
    const org = await createTestOrg();
    const inv = await issueInvoice(t, org, customer, 90_000);
    const pay = async (amountOere: number) => {
      const res = await call(t.app, 'POST', `/v1/invoices/${inv.invoiceId}/payments`, { key: org.apiKey, body: { amountOere, paymentDate: '2025-12-03' } });
      assert.equal(res.status, 201, res.raw);
      return res.body.meta.paymentId as string;
    };
    const early = await pay(10_000);
    await upload(org, logo, 'image/png');
    const late = await pay(20_000);
    const receipt = async (paymentId: string) => {
      assert.deepEqual(await renderPaymentReceipt(deps(), paymentId), { status: 'rendered' });
      return (await pdf(org, `/v1/payments/${paymentId}/receipt`)).bytes;
    };
    assert.deepEqual(await pdfImages(await receipt(early)), []);
    assert.deepEqual(await pdfImages(await receipt(late)), [{ width: 360, height: 120 }]);
  });

  it('prints an SVG logo (as uploaded, sanitised), drawn on the first page', async () => {
    const org = await createTestOrg();
    const plain = await issueInvoice(t, org, customer, 10_000);
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="100" onload="alert(1)"><rect width="300" height="100" fill="#00aa55"/></svg>';
    await upload(org, Buffer.from(svg), 'image/svg+xml');
    const branded = await issueInvoice(t, org, customer, 10_000);
    // Chromium draws an SVG as vectors, not as an image object: the page, rasterised, shows the logo's colour.
    assert.equal(await greenPixels((await pdf(org, `/v1/invoices/${plain.invoiceId}/pdf`)).bytes), 0);
    assert.ok((await greenPixels((await pdf(org, `/v1/invoices/${branded.invoiceId}/pdf`)).bytes)) > 500);
  });
});

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createChromiumRenderer, type ChromiumRenderer } from '../../activities/pdf/chromium-renderer.ts';
import type { DocumentViews } from '../../services/documents/pdf-renderer.ts';
import type { InvoiceDocumentView } from '../../services/invoices/invoice-document.ts';
import { pdfText } from '../helpers/pdf-text.ts';

/**
 * The PDF renderer with Debian's real Chromium: documents read back with pdftotext, the pool's bound under a burst,
 * the network block, the render timeout, recovery from a killed browser, and no process left behind by close().
 */


/** A process counts as gone once it is reaped or a zombie (dead, waiting for its parent to collect it). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function waitUntil(what: string, done: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`${what} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** pgrep's exit code 1 means no process matched. */
function pgrep(pattern: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile('pgrep', ['-f', pattern], (err, stdout) => {
      if (err && err.code === 1) resolve([]);
      else if (err) reject(new Error(`pgrep failed: ${err.message}`));
      else resolve(stdout.trim().split('\n'));
    });
  });
}

async function browserPid(renderer: ChromiumRenderer): Promise<number> {
  const browser = (await renderer.processes()).find((p) => p.type === 'browser');
  assert.ok(browser, 'a running browser reports its own process');
  return browser.pid;
}

const seller: InvoiceDocumentView['seller'] = {
  name: 'Bager Hansen ApS',
  cvr: '12345678',
  street: 'Bagergade 12',
  postalCode: '8000',
  city: 'Aarhus C',
  country: null,
  email: 'faktura@bagerhansen.dk',
  bankReg: '1234',
  bankAccount: '0012345678',
};

const danishInvoice = (number = 1042): DocumentViews['invoice'] => ({
  language: 'da',
  kind: 'invoice',
  number,
  issueDate: '2026-11-21',
  dueDate: '2026-12-05',
  seller,
  buyer: { name: 'Kunde A/S', cvr: '87654321', street: 'Industrivej 4', postalCode: '2600', city: 'Glostrup', country: null, contactPerson: null },
  heading: null,
  message: null,
  customerReference: null,
  senderReference: null,
  buyerReference: null,
  orderReference: null,
  lines: [
    { description: 'Rugbrød', quantity: '120', unit: 'stk.', unitPriceOere: 3500, discount: null, discountOere: 0, netOere: 420000, vatRateBps: 2500, vatExemptionReason: null },
    { description: 'Kursus i bagning', quantity: '1', unit: null, unitPriceOere: 200000, discount: null, discountOere: 0, netOere: 200000, vatRateBps: 0, vatExemptionReason: 'ML13' },
    { description: 'Mel til Tyskland', quantity: '1000', unit: 'kg', unitPriceOere: 1200, discount: null, discountOere: 0, netOere: 1200000, vatRateBps: 0, vatExemptionReason: 'EU_VARE' },
  ],
  vatSummary: [{ vatRateBps: 2500, netOere: 420000, vatOere: 105000 }],
  exemptSummary: [
    { reason: 'ML13', netOere: 200000 },
    { reason: 'EU_VARE', netOere: 1200000 },
  ],
  netOere: 1820000,
  vatOere: 105000,
  grossOere: 1925000,
  credits: null,
});

const englishCreditNote: DocumentViews['creditNote'] = {
  ...danishInvoice(1043),
  language: 'en',
  kind: 'creditNote',
  issueDate: '2026-11-25',
  dueDate: null,
  lines: [
    { description: 'Rugbrød', quantity: '120', unit: 'stk.', unitPriceOere: 3500, discount: null, discountOere: 0, netOere: 420000, vatRateBps: 2500, vatExemptionReason: null },
    { description: 'Mel til Norge', quantity: '1', unit: null, unitPriceOere: 50000, discount: null, discountOere: 0, netOere: 50000, vatRateBps: 0, vatExemptionReason: 'EKSPORT' },
  ],
  vatSummary: [{ vatRateBps: 2500, netOere: 420000, vatOere: 105000 }],
  exemptSummary: [{ reason: 'EKSPORT', netOere: 50000 }],
  netOere: 470000,
  vatOere: 105000,
  grossOere: 575000,
  credits: { number: 1042, issueDate: '2026-11-21', reason: 'Wrong quantity delivered' },
};

describe('Chromium PDF renderer', function () {
  this.timeout(60_000);
  let renderer: ChromiumRenderer;

  before(() => {
    renderer = createChromiumRenderer({ poolSize: 2 });
  });

  after(async () => {
    await renderer.close();
  });

  it('renders a Danish invoice whose text carries the § 58 content, the due date and the bank details', async () => {
    const pdf = await renderer.render('invoice', danishInvoice());
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
    const text = await pdfText(pdf);
    for (const expected of [
      'Faktura',
      'Fakturanr. 1042',
      'Fakturadato 21-11-2026',
      'Forfaldsdato 05-12-2026',
      'Bager Hansen ApS',
      'Bagergade 12',
      '8000 Aarhus C',
      'CVR-nr. 12345678',
      'Kunde A/S',
      'CVR-nr. 87654321',
      'Rugbrød 120 stk. 35,00 kr.',
      '4.200,00 kr.',
      'Moms 25 % 4.200,00 kr. 1.050,00 kr.',
      'Momsfritaget, jf. momslovens § 13',
      'Momsfri levering af varer til andet EU-land',
      'DK87654321',
      'Moms i alt 1.050,00 kr.',
      'I alt DKK 19.250,00 kr.',
      'Reg.nr. 1234',
      'Kontonr. 0012345678',
      'Betalingsreference 1042',
      'Faktura 1042 · Side 1 af 1',
    ]) {
      assert.ok(text.includes(expected), `the PDF text lacks ${JSON.stringify(expected)}:\n${text}`);
    }
  });

  it('renders an English credit note that names the credited invoice by number and date', async () => {
    const text = await pdfText(await renderer.render('creditNote', englishCreditNote));
    for (const expected of [
      'Credit note',
      'Credit note no. 1043',
      'Date 2026-11-25',
      'Credit note for invoice no. 1042 dated 2026-11-21',
      'Reason: Wrong quantity delivered',
      'CVR no. 12345678',
      'VAT 25% DKK 4,200.00 DKK 1,050.00',
      'Export outside the EU — VAT exempt',
      'Total credited DKK DKK 5,750.00',
      'Credit note 1043 · Page 1 of 1',
    ]) {
      assert.ok(text.includes(expected), `the PDF text lacks ${JSON.stringify(expected)}:\n${text}`);
    }
    assert.ok(!text.includes('Due date') && !text.includes('Reg. no.'), 'a credit note asks for no payment');
  });

  it('never leaves a page with nothing but the footer, however many lines fill the page before it', async () => {
    const base = danishInvoice(5001);
    const footerOnly: number[] = [];
    for (let n = 1; n <= 24; n++) {
      const lines = Array.from({ length: n }, (_, i) => ({ ...base.lines[i % base.lines.length]!, description: `Vare ${i + 1}` }));
      const pages = (await pdfText(await renderer.render('invoice', { ...base, lines }))).split('\f').filter((p) => p.trim() !== '');
      // What a page holds besides the running page label and the seller's footer line.
      const content = (page: string) => page.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !/^Faktura 5001 · Side \d+ af \d+$/.test(l) && !l.startsWith('Bager Hansen ApS · Bagergade'));
      if (pages.some((p) => content(p).length === 0)) footerOnly.push(n);
    }
    assert.deepEqual(footerOnly, []);
  });

  it('renders a burst of 10 with poolSize 2: all succeed with their own content, never more than 2 at once, on 2 reused pages', async () => {
    const pooled = createChromiumRenderer({ poolSize: 2 });
    try {
      const renders = Array.from({ length: 10 }, (_, i) => pooled.render('invoice', danishInvoice(2001 + i)));
      // Admission happens before the first await: two renders hold pages, eight wait their turn.
      assert.deepEqual({ rendering: pooled.stats().rendering, queued: pooled.stats().queued }, { rendering: 2, queued: 8 });
      const pdfs = await Promise.all(renders);
      for (const [i, pdf] of pdfs.entries()) {
        assert.ok((await pdfText(pdf)).includes(`Fakturanr. ${2001 + i}`), `render ${i} carries its own number`);
      }
      const stats = pooled.stats();
      assert.deepEqual(
        { peak: stats.peakRendering, rendering: stats.rendering, queued: stats.queued, pages: stats.pagesOpened, launches: stats.launches, rendered: stats.rendered },
        { peak: 2, rendering: 0, queued: 0, pages: 2, launches: 1, rendered: 10 },
      );
    } finally {
      await pooled.close();
    }
  });

  it('blocks every request a document makes, and an invoice makes none', async () => {
    let hits = 0;
    const server: Server = createServer((_req, res) => {
      hits++;
      res.end('x');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const before = renderer.stats().blockedRequests;
      const pdf = await renderer.renderHtml(
        `<link rel="stylesheet" href="${base}/style.css"><img src="${base}/logo.png">` +
          `<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">` +
          `<p>offline</p>`,
      );
      assert.ok((await pdfText(pdf)).includes('offline'));
      assert.equal(hits, 0);
      assert.equal(renderer.stats().blockedRequests - before, 2);
      const afterBlocked = renderer.stats().blockedRequests;
      await renderer.render('invoice', danishInvoice());
      assert.equal(renderer.stats().blockedRequests, afterBlocked, 'the invoice template is self-contained');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('gives up on a render that passes timeoutMs, discards its page and renders the next one', async () => {
    // 5 s: far above a small render even on a loaded machine, far below the huge one.
    const bounded = createChromiumRenderer({ poolSize: 1, timeoutMs: 5000 });
    try {
      await bounded.renderHtml('<p>warm</p>');
      // Sixty thousand table rows take tens of seconds to lay out and print.
      const huge = `<table>${'<tr><td>row</td><td>cell</td></tr>'.repeat(60_000)}</table>`;
      const started = Date.now();
      await assert.rejects(bounded.renderHtml(huge), /PDF rendering took longer than 5000 ms/);
      assert.ok(Date.now() - started < 8000, 'the timeout ends the render, not the render itself, and it is not retried');
      assert.ok((await pdfText(await bounded.renderHtml('<p>after the timeout</p>'))).includes('after the timeout'));
      assert.deepEqual({ pages: bounded.stats().pagesOpened, launches: bounded.stats().launches }, { pages: 2, launches: 1 });
    } finally {
      await bounded.close();
    }
  });

  it('launches a new browser after the warm one was killed', async () => {
    await renderer.render('invoice', danishInvoice());
    const launches = renderer.stats().launches;
    const oldPids = (await renderer.processes()).map((p) => p.pid);
    process.kill(await browserPid(renderer), 'SIGKILL');
    const text = await pdfText(await renderer.render('invoice', danishInvoice(3001)));
    assert.ok(text.includes('Fakturanr. 3001'));
    assert.equal(renderer.stats().launches, launches + 1);
    await waitUntil('the killed browser’s processes end', () => oldPids.every((pid) => !alive(pid)));
  });

  it('close() ends every Chromium process it started and removes the browser profile, also with renders in flight', async () => {
    const closing = createChromiumRenderer({ poolSize: 2 });
    await Promise.all([closing.render('invoice', danishInvoice()), closing.render('creditNote', englishCreditNote)]);
    const processes = await closing.processes();
    const pid = processes.find((p) => p.type === 'browser')!.pid;
    assert.ok(processes.filter((p) => p.type === 'renderer').length >= 2, JSON.stringify(processes));
    const profile = /--user-data-dir=([^\0]+)/.exec(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))?.[1];
    assert.ok(profile && existsSync(profile), 'the browser runs on a fresh profile directory');
    assert.ok((await pgrep(profile)).length >= 2);

    // Two renders hold the pages and two wait: close() must not leave the waiting ones a browser to launch.
    const inFlight = Promise.allSettled(Array.from({ length: 4 }, (_, i) => closing.render('invoice', danishInvoice(4001 + i))));
    await closing.close();
    const settled = await inFlight;
    for (const r of settled.slice(2)) {
      assert.ok(r.status === 'rejected', 'a render still waiting for a page when close() ran must fail');
      assert.match(String(r.reason), /the PDF renderer is closed/);
    }
    assert.equal(closing.stats().launches, 1);
    await waitUntil('every Chromium process ends', () => processes.every((p) => !alive(p.pid)));
    assert.deepEqual(await pgrep(profile), []);
    assert.equal(existsSync(profile), false);
    assert.deepEqual(await closing.processes(), []);
    await assert.rejects(closing.render('invoice', danishInvoice()), /the PDF renderer is closed/);
  });
});

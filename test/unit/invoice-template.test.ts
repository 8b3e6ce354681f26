import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  INVOICE_TEMPLATE_URL,
  formatDate,
  formatDecimal,
  formatRate,
  renderInvoiceHtml,
} from '../../activities/pdf/invoice-template.ts';
import QRCode from 'qrcode';
import { qrCodeSvg } from '../../activities/pdf/qr-code.ts';
import type { InvoiceDocumentView } from '../../services/invoices/invoice-document.ts';
import { formatOere } from '../../services/shared/money.ts';

/**
 * The document content of Momsbekendtgørelsen § 58 (docs/api-conventions.md, "Invoices and credit notes", Seller
 * details), read back from the HTML the PDF is made of.
 */

type Line = InvoiceDocumentView['lines'][number];
const line = (l: Partial<Line> & Pick<Line, 'description' | 'netOere'>): Line => ({
  quantity: '1',
  unit: null,
  unitPriceOere: l.netOere,
  discount: null,
  discountOere: 0,
  vatRateBps: 2500,
  vatExemptionReason: null,
  ...l,
});

const danishInvoice: InvoiceDocumentView = {
  language: 'da',
  kind: 'invoice',
  number: 1042,
  issueDate: '2026-11-21',
  dueDate: '2026-12-05',
  seller: {
    name: 'Bager Hansen ApS',
    cvr: '12345678',
    street: 'Bagergade 12',
    postalCode: '8000',
    city: 'Aarhus C',
    country: null,
    email: 'faktura@bagerhansen.dk',
    bankReg: '1234',
    bankAccount: '0012345678',
  },
  buyer: { name: 'Kunde A/S', cvr: '87654321', street: 'Industrivej 4', postalCode: '2600', city: 'Glostrup', country: 'Danmark', contactPerson: 'Ida Jensen' },
  heading: 'Levering november',
  message: 'Tak for handlen.',
  customerReference: 'PO-4711',
  senderReference: 'MH',
  buyerReference: null,
  orderReference: null,
  lines: [
    line({ description: 'Rugbrød', quantity: '120', unit: 'stk.', unitPriceOere: 3495, discount: { type: 'percent', value: 10 }, discountOere: 41940, netOere: 377460 }),
    line({ description: 'Kursus i bagning', unitPriceOere: 250000, discount: { type: 'amount', value: 50000 }, discountOere: 50000, netOere: 200000, vatRateBps: 0, vatExemptionReason: 'ML13' }),
    line({ description: 'Konsulentbistand', quantity: '1.5', unit: 'timer', unitPriceOere: 95000, netOere: 142500 }),
    line({ description: 'Mel til Tyskland', quantity: '1000', unit: 'kg', unitPriceOere: 1200, netOere: 1200000, vatRateBps: 0, vatExemptionReason: 'EU_VARE' }),
    line({ description: 'Byggeydelse', netOere: 300000, vatRateBps: 0, vatExemptionReason: 'OMVENDT' }),
    line({ description: 'Mel til Norge', netOere: 400000, vatRateBps: 0, vatExemptionReason: 'EKSPORT' }),
    line({ description: 'Bog', netOere: 10000, vatRateBps: 1250 }),
  ],
  vatSummary: [
    { vatRateBps: 1250, netOere: 10000, vatOere: 1250 },
    { vatRateBps: 2500, netOere: 519960, vatOere: 129990 },
  ],
  exemptSummary: [
    { reason: 'ML13', netOere: 200000 },
    { reason: 'EU_VARE', netOere: 1200000 },
    { reason: 'OMVENDT', netOere: 300000 },
    { reason: 'EKSPORT', netOere: 400000 },
  ],
  netOere: 2629960,
  vatOere: 131240,
  grossOere: 2761200,
  credits: null,
};

const englishCreditNote: InvoiceDocumentView = {
  ...danishInvoice,
  language: 'en',
  kind: 'creditNote',
  number: 1043,
  issueDate: '2026-11-25',
  dueDate: null,
  credits: { number: 1042, issueDate: '2026-11-21', reason: 'Wrong quantity delivered' },
};

// Handlebars escapes exactly these; decoding them gives back the text a reader sees.
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#x27': "'", '#x60': '`', '#x3D': '=' };
const text = (fragment: string): string =>
  fragment
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(amp|lt|gt|quot|#x27|#x60|#x3D);/g, (_, e: string) => ENTITIES[e]!)
    .replace(/\s+/g, ' ')
    .trim();

/** From `open` up to the first `close` after it (both included). */
function element(html: string, open: string, close: string): string {
  const start = html.indexOf(open);
  assert.ok(start >= 0, `${open} is missing`);
  const end = html.indexOf(close, start);
  assert.ok(end >= 0, `${close} is missing after ${open}`);
  return html.slice(start, end + close.length);
}

/** Each row of the first table with this class, as the texts of its cells. */
function rows(html: string, cls: string): string[][] {
  const table = element(html, `<table class="${cls}">`, '</table>');
  return [...table.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((r) => [...r[1]!.matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((c) => text(c[1]!)));
}

describe('invoice document template', () => {
  describe('formatting', () => {
    it('writes øre as Danish and English money text without floating point', () => {
      const cases: [number, string, string][] = [
        [0, '0,00 kr.', 'DKK 0.00'],
        [5, '0,05 kr.', 'DKK 0.05'],
        [-5, '-0,05 kr.', 'DKK -0.05'],
        [123456, '1.234,56 kr.', 'DKK 1,234.56'],
        [100000, '1.000,00 kr.', 'DKK 1,000.00'],
        [99999999, '999.999,99 kr.', 'DKK 999,999.99'],
        [100000000000, '1.000.000.000,00 kr.', 'DKK 1,000,000,000.00'],
        [Number.MAX_SAFE_INTEGER, '90.071.992.547.409,91 kr.', 'DKK 90,071,992,547,409.91'],
      ];
      for (const [oere, da, en] of cases) {
        assert.equal(formatOere(oere, 'da'), da);
        assert.equal(formatOere(oere, 'en'), en);
      }
      assert.throws(() => formatOere(1.5, 'da'), RangeError);
    });

    it('writes dates as DD-MM-YYYY in Danish and YYYY-MM-DD in English', () => {
      assert.equal(formatDate('2026-01-09', 'da'), '09-01-2026');
      assert.equal(formatDate('2026-01-09', 'en'), '2026-01-09');
      assert.throws(() => formatDate('9/1/2026', 'da'), RangeError);
    });

    it('writes quantities and rates with the language separators', () => {
      assert.equal(formatDecimal('1.5', 'da'), '1,5');
      assert.equal(formatDecimal('1500.25', 'da'), '1.500,25');
      assert.equal(formatDecimal('1500.25', 'en'), '1,500.25');
      assert.equal(formatDecimal('999999', 'en'), '999,999');
      assert.throws(() => formatDecimal('1e3', 'en'), RangeError);
      assert.equal(formatRate(2500, 'da'), '25 %');
      assert.equal(formatRate(2500, 'en'), '25%');
      assert.equal(formatRate(1250, 'da'), '12,5 %');
      assert.equal(formatRate(1205, 'en'), '12.05%');
      assert.equal(formatRate(0, 'da'), '0 %');
    });
  });

  describe('Danish invoice', () => {
    const html = renderInvoiceHtml(danishInvoice);

    it('names the seller with address and CVR, and the buyer with address and CVR', () => {
      assert.equal(
        text(element(html, '<div class="seller">', '<h1>')),
        'Bager Hansen ApS Bagergade 12 8000 Aarhus C CVR-nr. 12345678 E-mail: faktura@bagerhansen.dk',
      );
      assert.equal(
        text(element(html, '<div class="buyer">', '<table class="details">')),
        'Kunde Kunde A/S Att. Ida Jensen Industrivej 4 2600 Glostrup Danmark CVR-nr. 87654321',
      );
      assert.match(html, /<html lang="da">/);
      assert.equal(text(element(html, '<h1>', '</h1>')), 'Faktura');
    });

    it('shows number, issue date, due date and references', () => {
      assert.deepEqual(rows(html, 'details'), [
        ['Fakturanr.', '1042'],
        ['Fakturadato', '21-11-2026'],
        ['Forfaldsdato', '05-12-2026'],
        ['Deres reference', 'PO-4711'],
        ['Vores reference', 'MH'],
      ]);
    });

    it('lists every line with quantity, description, unit price, discount, VAT rate and net amount; exempt lines apart under their wording', () => {
      assert.deepEqual(rows(html, 'lines'), [
        ['Beskrivelse', 'Antal', 'Enhedspris', 'Rabat', 'Moms', 'Beløb ekskl. moms'],
        ['Rugbrød', '120 stk.', '34,95 kr.', '10 %', '25 %', '3.774,60 kr.'],
        ['Konsulentbistand', '1,5 timer', '950,00 kr.', '', '25 %', '1.425,00 kr.'],
        ['Bog', '1', '100,00 kr.', '', '12,5 %', '100,00 kr.'],
        ['Momsfritaget, jf. momslovens § 13'],
        ['Kursus i bagning', '1', '2.500,00 kr.', '500,00 kr.', '0 %', '2.000,00 kr.'],
        ['Momsfri levering af varer til andet EU-land Købers momsregistreringsnr.: DK87654321'],
        ['Mel til Tyskland', '1.000 kg', '12,00 kr.', '', '0 %', '12.000,00 kr.'],
        ['Omvendt betalingspligt'],
        ['Byggeydelse', '1', '3.000,00 kr.', '', '0 %', '3.000,00 kr.'],
        ['Eksport uden for EU — momsfritaget'],
        ['Mel til Norge', '1', '4.000,00 kr.', '', '0 %', '4.000,00 kr.'],
      ]);
    });

    it('shows VAT per rate, the exempt amounts with their wording, and the totals in DKK', () => {
      assert.deepEqual(rows(html, 'vat-breakdown'), [
        ['Momsspecifikation', 'Grundlag', 'Moms'],
        ['Moms 12,5 %', '100,00 kr.', '12,50 kr.'],
        ['Moms 25 %', '5.199,60 kr.', '1.299,90 kr.'],
        ['Momsfritaget, jf. momslovens § 13', '2.000,00 kr.', '0,00 kr.'],
        ['Momsfri levering af varer til andet EU-land Købers momsregistreringsnr.: DK87654321', '12.000,00 kr.', '0,00 kr.'],
        ['Omvendt betalingspligt', '3.000,00 kr.', '0,00 kr.'],
        ['Eksport uden for EU — momsfritaget', '4.000,00 kr.', '0,00 kr.'],
      ]);
      assert.deepEqual(rows(html, 'totals'), [
        ['I alt ekskl. moms', '26.299,60 kr.'],
        ['Moms i alt', '1.312,40 kr.'],
        ['I alt DKK', '27.612,00 kr.'],
      ]);
    });

    it('says when and how to pay: due date, amount, bank registration and account, the invoice number as reference', () => {
      const payment = element(html, '<section class="payment">', '</section>');
      assert.deepEqual(
        [...payment.matchAll(/<tr><th>([^<]*)<\/th><td>([^<]*)<\/td><\/tr>/g)].map((m) => [m[1], m[2]]),
        [
          ['Forfaldsdato', '05-12-2026'],
          ['Beløb at betale', '27.612,00 kr.'],
          ['Reg.nr.', '1234'],
          ['Kontonr.', '0012345678'],
          ['Betalingsreference', '1042'],
        ],
      );
      assert.match(text(payment), /Angiv fakturanummeret som reference ved betaling\.$/);
    });

    it('with a payment link and an FI-kort payment id: the +71 line, the code and the link beside the bank details, and the QR code of the link', async () => {
      const url = 'https://betal.example.dk/p/0123456789abcdef0123456789abcdef';
      const fik = { type: '71' as const, paymentId: '000000000010421', creditorNumber: '85799665', line: '+71<000000000010421+85799665<' };
      const out = renderInvoiceHtml({ ...danishInvoice, paymentLink: { url, paymentCode: 'AB12-CD34' }, fik });
      const payment = element(out, '<section class="payment">', '</section>');
      assert.deepEqual(
        [...payment.matchAll(/<tr><th>([^<]*)<\/th><td>([^<]*)<\/td><\/tr>/g)].map((m) => [m[1], m[2]]),
        [
          ['Forfaldsdato', '05-12-2026'],
          ['Beløb at betale', '27.612,00 kr.'],
          ['Reg.nr.', '1234'],
          ['Kontonr.', '0012345678'],
          ['Betalingsreference', '1042'],
          ['FI-kort', '+71&lt;000000000010421+85799665&lt;'],
          ['Betalingskode', 'AB12-CD34'],
        ],
      );
      assert.ok(payment.includes(`<tr class="url"><th>Betal online</th><td>${url}</td></tr>`), payment);
      // The QR code is the encoder's SVG of exactly the printed URL, error correction M, as an image in the page.
      const src = /<figure class="qr"><img src="data:image\/svg\+xml;base64,([^"]+)" alt="Scan og betal">/.exec(payment);
      assert.ok(src, payment);
      const svg = Buffer.from(src[1]!, 'base64').toString('utf8');
      assert.equal(svg, await QRCode.toString(url, { type: 'svg', errorCorrectionLevel: 'M' }));
      assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 (\d+) \1"/);
      assert.equal(svg, qrCodeSvg(url));
      assert.notEqual(svg, qrCodeSvg(`${url}0`));
    });

    it('without a link or payment id: neither rows nor QR code; a credit note prints none even with them', () => {
      const payment = element(html, '<section class="payment">', '</section>');
      assert.ok(!payment.includes('<figure') && !payment.includes('FI-kort') && !payment.includes('Betal online'));
      const credit = renderInvoiceHtml({
        ...danishInvoice, kind: 'creditNote', dueDate: null, credits: { number: 1041, issueDate: '2026-11-01', reason: 'Fejl' },
        paymentLink: { url: 'https://betal.example.dk/p/0123456789abcdef0123456789abcdef', paymentCode: 'AB12-CD34' },
        fik: { type: '71', paymentId: '000000000010421', creditorNumber: '85799665', line: '+71<000000000010421+85799665<' },
      });
      assert.ok(!credit.includes('class="payment"') && !credit.includes('<figure') && !credit.includes('+71'));
    });

    it('prints heading and message, and the page number in the page margin', () => {
      assert.equal(text(element(html, '<h2 class="heading">', '</h2>')), 'Levering november');
      assert.equal(text(element(html, '<p class="message">', '</p>')), 'Tak for handlen.');
      assert.match(html, /content: "Faktura 1042 · Side " counter\(page\) " af " counter\(pages\);/);
    });

    it('omits the EU buyer VAT number line when the buyer has no CVR, and bank rows the seller has not given', () => {
      const view = { ...danishInvoice, buyer: { ...danishInvoice.buyer, cvr: null }, seller: { ...danishInvoice.seller, bankReg: null, bankAccount: null } };
      const out = renderInvoiceHtml(view);
      assert.ok(!out.includes('momsregistreringsnr'));
      assert.ok(!out.includes('Reg.nr.') && !out.includes('Kontonr.'));
      assert.ok(out.includes('<th>Betalingsreference</th><td>1042</td>'));
    });
  });

  describe('English credit note', () => {
    const html = renderInvoiceHtml(englishCreditNote);

    it('is titled a credit note and refers unambiguously to the original invoice by number and date, with the reason', () => {
      assert.match(html, /<html lang="en">/);
      assert.equal(text(element(html, '<h1>', '</h1>')), 'Credit note');
      assert.equal(
        text(element(html, '<section class="credit-ref">', '</section>')),
        'Credit note for invoice no. 1042 dated 2026-11-21 Reason: Wrong quantity delivered',
      );
      assert.deepEqual(rows(html, 'details'), [
        ['Credit note no.', '1043'],
        ['Date', '2026-11-25'],
        ['Your reference', 'PO-4711'],
        ['Our reference', 'MH'],
      ]);
    });

    it('uses English amounts, rates and exemption wordings, and has nothing to pay', () => {
      assert.deepEqual(rows(html, 'lines').slice(0, 6), [
        ['Description', 'Quantity', 'Unit price', 'Discount', 'VAT', 'Amount excl. VAT'],
        ['Rugbrød', '120 stk.', 'DKK 34.95', '10%', '25%', 'DKK 3,774.60'],
        ['Konsulentbistand', '1.5 timer', 'DKK 950.00', '', '25%', 'DKK 1,425.00'],
        ['Bog', '1', 'DKK 100.00', '', '12.5%', 'DKK 100.00'],
        ['VAT exempt, cf. section 13 of the Danish VAT Act'],
        ['Kursus i bagning', '1', 'DKK 2,500.00', 'DKK 500.00', '0%', 'DKK 2,000.00'],
      ]);
      assert.deepEqual(rows(html, 'vat-breakdown').slice(3), [
        ['VAT exempt, cf. section 13 of the Danish VAT Act', 'DKK 2,000.00', 'DKK 0.00'],
        ["VAT-exempt supply of goods to another EU country Buyer's VAT reg. no.: DK87654321", 'DKK 12,000.00', 'DKK 0.00'],
        ['Reverse charge', 'DKK 3,000.00', 'DKK 0.00'],
        ['Export outside the EU — VAT exempt', 'DKK 4,000.00', 'DKK 0.00'],
      ]);
      assert.deepEqual(rows(html, 'totals'), [
        ['Total excl. VAT', 'DKK 26,299.60'],
        ['Total VAT', 'DKK 1,312.40'],
        ['Total credited DKK', 'DKK 27,612.00'],
      ]);
      assert.ok(!html.includes('class="payment"'));
      assert.ok(!html.includes('Due date'));
      assert.match(html, /content: "Credit note 1043 · Page " counter\(page\) " of " counter\(pages\);/);
    });

    it('refuses a credit note that does not say which invoice it credits', () => {
      assert.throws(() => renderInvoiceHtml({ ...englishCreditNote, credits: null }), /must name the invoice it credits/);
    });
  });

  describe('escaping and self-containment', () => {
    it('escapes markup in every text an integrator or customer wrote', () => {
      const evil = '<script>alert("x")</script>';
      const out = renderInvoiceHtml({
        ...danishInvoice,
        seller: { ...danishInvoice.seller, name: `Hansen & Co ${evil}` },
        buyer: { ...danishInvoice.buyer, name: `"><img src=x onerror=alert(1)>`, contactPerson: evil },
        heading: evil,
        message: evil,
        customerReference: evil,
        lines: [{ ...danishInvoice.lines[0]!, description: evil, unit: '<b>' }],
      });
      assert.ok(!out.includes('<script'), 'a script element got through');
      assert.ok(!out.includes('<img'), 'an img element got through');
      assert.ok(!out.includes('<b>'));
      assert.ok(out.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'));
      assert.ok(out.includes('Hansen &amp; Co'));
      assert.equal(rows(out, 'lines')[1]![0], evil);
    });

    it('uses only escaping expressions in the template, and the HTML refers to nothing outside itself', () => {
      const source = readFileSync(INVOICE_TEMPLATE_URL, 'utf8');
      assert.ok(!source.includes('{{{') && !source.includes('{{&'), 'the template must not print unescaped values');
      const out = renderInvoiceHtml(danishInvoice);
      assert.doesNotMatch(out, /https?:|src=|href=|url\(|@import|<script/i);
    });
  });
});

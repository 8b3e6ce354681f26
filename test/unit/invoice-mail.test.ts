import assert from 'node:assert/strict';
import { composeInvoiceMail, type InvoiceMailInput } from '../../activities/mail/invoice-mail.ts';
import type { InvoiceDocumentView } from '../../services/invoices/invoice-document.ts';

const party = { cvr: null, street: null, postalCode: null, city: null, country: null };

function view(over: Partial<InvoiceDocumentView> = {}): InvoiceDocumentView {
  return {
    language: 'da',
    kind: 'invoice',
    number: 17,
    issueDate: '2026-01-05',
    dueDate: '2026-01-19',
    seller: { ...party, name: 'Bager Hansen ApS', cvr: '12345678', email: 'faktura@bager.dk', bankReg: '1234', bankAccount: '0001234567' },
    buyer: { ...party, name: 'Kunde A/S', contactPerson: null },
    heading: null,
    message: null,
    customerReference: null,
    senderReference: null,
    buyerReference: null,
    orderReference: null,
    lines: [],
    vatSummary: [{ vatRateBps: 2500, netOere: 98765, vatOere: 24691 }],
    exemptSummary: [],
    netOere: 98765,
    vatOere: 24691,
    grossOere: 123456,
    credits: null,
    ...over,
  };
}

const pdf = Buffer.from('%PDF-1.7 test');

function input(over: Partial<InvoiceMailInput> = {}): InvoiceMailInput {
  return {
    view: view(),
    seller: { name: 'Bager Hansen ApS', email: 'faktura@bager.dk' },
    fromAddress: 'no-reply@faktura.invalid',
    to: 'bogholderi@kunde.dk',
    pdf,
    messageId: 'inv-17.invoice.1@faktura.invalid',
    trackingPixelUrl: 'https://api.example.dk/t/abc123.gif',
    paymentUrl: 'https://pay.example.dk/p/9f8e',
    ...over,
  };
}

const creditNote = (language: 'da' | 'en') =>
  view({ language, kind: 'creditNote', number: 18, issueDate: '2026-02-01', dueDate: null, grossOere: 50000, credits: { number: 17, issueDate: '2026-01-05', reason: 'Forkert antal' } });

describe('invoice mail', () => {
  it('writes a Danish invoice mail: subject, sender, Reply-To, amounts, payment, link, pixel and the PDF', () => {
    const m = composeInvoiceMail(input());
    assert.equal(m.subject, 'Faktura 17 fra Bager Hansen ApS');
    assert.deepEqual(m.from, { name: 'Bager Hansen ApS', address: 'no-reply@faktura.invalid' });
    assert.equal(m.replyTo, 'faktura@bager.dk');
    assert.equal(m.to, 'bogholderi@kunde.dk');
    assert.equal(m.messageId, 'inv-17.invoice.1@faktura.invalid');
    assert.deepEqual(m.attachments, [{ filename: 'faktura-17.pdf', contentType: 'application/pdf', content: pdf }]);
    assert.equal(
      m.text,
      [
        'Kære Kunde A/S,',
        '',
        'Hermed faktura 17 fra Bager Hansen ApS. Fakturaen er vedhæftet som PDF.',
        '',
        'Fakturanummer: 17',
        'Dato: 05-01-2026',
        'Beløb til betaling: 1.234,56 kr.',
        'Forfaldsdato: 19-01-2026',
        '',
        'Betal venligst til reg.nr. 1234, kontonr. 0001234567, og angiv 17 som reference.',
        '',
        'Betal fakturaen online: https://pay.example.dk/p/9f8e',
        '',
        'Med venlig hilsen',
        'Bager Hansen ApS',
        '',
      ].join('\n'),
    );
    assert.match(m.html, /^<!doctype html>\n<html lang="da">/);
    assert.match(m.html, /<td[^>]*>Beløb til betaling<\/td><td[^>]*>1\.234,56 kr\.<\/td>/);
    assert.match(m.html, /<td[^>]*>Forfaldsdato<\/td><td[^>]*>19-01-2026<\/td>/);
    assert.match(m.html, /reg\.nr\. 1234, kontonr\. 0001234567, og angiv 17 som reference/);
    assert.match(m.html, /<a href="https:\/\/pay\.example\.dk\/p\/9f8e"[^>]*>Betal fakturaen online<\/a>/);
    assert.match(m.html, /<img src="https:\/\/api\.example\.dk\/t\/abc123\.gif" width="1" height="1" alt="">/);
  });

  it('writes an English invoice mail with English number and date formats', () => {
    const m = composeInvoiceMail(input({ view: view({ language: 'en', grossOere: 100000000 }) }));
    assert.equal(m.subject, 'Invoice 17 from Bager Hansen ApS');
    assert.equal(m.attachments[0]!.filename, 'invoice-17.pdf');
    assert.match(m.text, /^Dear Kunde A\/S,\n\nPlease find attached invoice 17 from Bager Hansen ApS as a PDF\.\n/);
    assert.match(m.text, /\nInvoice number: 17\nDate: 2026-01-05\nAmount due: DKK 1,000,000\.00\nDue date: 2026-01-19\n/);
    assert.match(m.text, /\nPlease pay to bank reg\. no\. 1234, account no\. 0001234567, with reference 17\.\n/);
    assert.match(m.text, /\nPay the invoice online: https:\/\/pay\.example\.dk\/p\/9f8e\n/);
    assert.match(m.text, /\nKind regards\nBager Hansen ApS\n$/);
    assert.match(m.html, /<html lang="en">/);
    assert.ok(!/[æøå]|kr\./.test(m.text), m.text);
  });

  it('adds the FI-kort +71 line and the payment code after the bank details, in both bodies and both languages', () => {
    const fik = { type: '71' as const, paymentId: '000000000000174', creditorNumber: '85799665', line: '+71<000000000000174+85799665<' };
    const paymentLink = { url: 'https://pay.example.dk/p/9f8e', paymentCode: 'AB12-CD34' };
    const da = composeInvoiceMail(input({ view: view({ fik, paymentLink }) }));
    assert.match(
      da.text,
      /\nBetal venligst til reg\.nr\. 1234, kontonr\. 0001234567, og angiv 17 som reference\.\nBetal med FI-kort: \+71<000000000000174\+85799665<\nBetalingskode: AB12-CD34\n\nBetal fakturaen online: https:\/\/pay\.example\.dk\/p\/9f8e\n/,
    );
    assert.match(da.html, /<p[^>]*>Betal med FI-kort: \+71&lt;000000000000174\+85799665&lt;<\/p>/);
    assert.match(da.html, /<p[^>]*>Betalingskode: AB12-CD34<\/p>/);
    const en = composeInvoiceMail(input({ view: view({ language: 'en', fik, paymentLink }) }));
    assert.match(en.text, /\nPay by FI card \(giro\): \+71<000000000000174\+85799665<\nPayment code: AB12-CD34\n/);
    // Without a payment id: no FI line.
    assert.ok(!composeInvoiceMail(input({ view: view({ fik: null, paymentLink }) })).text.includes('FI-kort'));
  });

  it('greets the contact person when the customer has one', () => {
    const m = composeInvoiceMail(input({ view: view({ buyer: { ...party, name: 'Kunde A/S', contactPerson: 'Ida Jensen' } }) }));
    assert.match(m.text, /^Kære Ida Jensen,\n/);
  });

  it('writes credit note wording in Danish and English, without anything to pay', () => {
    const da = composeInvoiceMail(input({ view: creditNote('da'), paymentUrl: null }));
    assert.equal(da.subject, 'Kreditnota 18 fra Bager Hansen ApS');
    assert.equal(da.attachments[0]!.filename, 'kreditnota-18.pdf');
    assert.match(da.text, /\nHermed kreditnota 18 fra Bager Hansen ApS\. Kreditnotaen er vedhæftet som PDF\.\n/);
    assert.match(da.text, /\nKreditnotanummer: 18\nDato: 01-02-2026\nKrediterer faktura: 17 af 05-01-2026\nÅrsag: Forkert antal\nKrediteret beløb: 500,00 kr\.\n/);
    assert.ok(!/Betal|Forfaldsdato|reg\.nr\./.test(da.text), da.text);

    const en = composeInvoiceMail(input({ view: creditNote('en'), paymentUrl: null }));
    assert.equal(en.subject, 'Credit note 18 from Bager Hansen ApS');
    assert.equal(en.attachments[0]!.filename, 'credit-note-18.pdf');
    assert.match(en.text, /\nCredit note number: 18\nDate: 2026-02-01\nCredits invoice: 17 of 2026-01-05\nReason: Forkert antal\nAmount credited: DKK 500\.00\n/);
    assert.ok(!/Pay|Due date|reg\. no\./.test(en.text), en.text);
  });

  it('refuses a payment link on a credit note', () => {
    assert.throws(() => composeInvoiceMail(input({ view: creditNote('da') })), /credit note has nothing to pay/);
  });

  it('escapes markup from names and reasons in the HTML and keeps it literal in the text', () => {
    const m = composeInvoiceMail(
      input({
        view: view({ buyer: { ...party, name: 'Kunde "A" & <i>Co</i>', contactPerson: null } }),
        seller: { name: 'Bager <b>Hansen</b> ApS', email: null },
      }),
    );
    assert.equal(m.subject, 'Faktura 17 fra Bager <b>Hansen</b> ApS');
    assert.equal(m.from.name, 'Bager <b>Hansen</b> ApS');
    assert.equal(m.replyTo, null);
    assert.ok(!m.html.includes('<b>'), m.html);
    assert.ok(!m.html.includes('<i>'), m.html);
    assert.match(m.html, /Hermed faktura 17 fra Bager &lt;b&gt;Hansen&lt;\/b&gt; ApS\./);
    assert.match(m.html, /<title>Faktura 17 fra Bager &lt;b&gt;Hansen&lt;\/b&gt; ApS<\/title>/);
    assert.match(m.html, /Kære Kunde &quot;A&quot; &amp; &lt;i&gt;Co&lt;\/i&gt;,/);
    assert.match(m.text, /^Kære Kunde "A" & <i>Co<\/i>,\n/);
    assert.match(m.text, /\nBager <b>Hansen<\/b> ApS\n$/);

    const credit = creditNote('en');
    const cn = composeInvoiceMail(input({ view: { ...credit, credits: { ...credit.credits!, reason: '<script>x()</script>' } }, paymentUrl: null }));
    assert.ok(!cn.html.includes('<script>'), cn.html);
    assert.match(cn.html, /<td[^>]*>Reason<\/td><td[^>]*>&lt;script&gt;x\(\)&lt;\/script&gt;<\/td>/);
  });

  it('escapes the pixel and payment URLs as attribute values and refuses non-web URLs', () => {
    const m = composeInvoiceMail(input({ trackingPixelUrl: 'https://api.example.dk/t?i=1&x="y"', paymentUrl: 'https://pay.example.dk/p?a=1&b=2' }));
    assert.match(m.html, /<img src="https:\/\/api\.example\.dk\/t\?i&#x3D;1&amp;x&#x3D;%22y%22" width="1" height="1" alt="">/);
    assert.match(m.html, /<a href="https:\/\/pay\.example\.dk\/p\?a&#x3D;1&amp;b&#x3D;2"/);
    assert.throws(() => composeInvoiceMail(input({ paymentUrl: 'javascript:alert(1)' })), /payment link must be an http\(s\) URL/);
    assert.throws(() => composeInvoiceMail(input({ trackingPixelUrl: 'data:image/gif;base64,R0lG' })), /tracking pixel must be an http\(s\) URL/);
  });

  it('leaves out the pixel, the link and the bank instructions when there are none', () => {
    const m = composeInvoiceMail(
      input({
        view: view({ seller: { ...party, name: 'Bager Hansen ApS', email: null, bankReg: null, bankAccount: null } }),
        trackingPixelUrl: null,
        paymentUrl: null,
      }),
    );
    assert.ok(!m.html.includes('<img'), m.html);
    assert.ok(!m.html.includes('<a '), m.html);
    assert.ok(!/Betal|reg\.nr\./.test(m.text), m.text);
    assert.match(m.text, /Forfaldsdato: 19-01-2026\n\nMed venlig hilsen\n/);
  });

  it('keeps the subject on one line whatever the name holds', () => {
    const m = composeInvoiceMail(input({ seller: { name: 'Bager\r\nBcc: x@y.dk', email: null } }));
    assert.equal(m.subject, 'Faktura 17 fra Bager Bcc: x@y.dk');
    assert.equal(m.from.name, 'Bager Bcc: x@y.dk');
  });
});

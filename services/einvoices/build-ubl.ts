import { create } from 'xmlbuilder2';
import { eInvoiceAddress } from '../customers/einvoice-address.ts';
import type { ErrorDetail } from '../shared/errors.ts';
import type { InvoiceDocumentView } from '../invoices/invoice-document.ts';
import {
  amount,
  countryCode,
  cvrOf,
  oioublScheme,
  PAYMENT_MEANS,
  percent,
  TAX_SCHEME,
  unitCode,
  vatCategory,
  type EInvoiceProfile,
} from './ubl-mappings.ts';

/**
 * The UBL 2.1 e-invoice of an issued invoice or credit note (docs/einvoicing.md, "What the e-invoice says"), built
 * with xmlbuilder2 from the document view the PDF was rendered from: the same snapshot, the same figures to the øre.
 * Peppol BIS Billing 3.0 or OIOUBL 2.1; every code comes from ubl-mappings.ts.
 */
export interface EInvoiceSource {
  /** The issued document's id: OIOUBL's document UUID. */
  id: string;
  view: InvoiceDocumentView;
  /** The issued PDF, embedded as an additional document. */
  pdf: Buffer;
  /** The FI-kort +71 payment id, when the invoice has one: paid by FI-kort besides the bank transfer. */
  fik?: { paymentId: string; creditorNumber: string } | null;
}

type Xml = Record<string, unknown>;

const NS = {
  Invoice: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  CreditNote: 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
};

/**
 * What the issued snapshot lacks for the profile, one detail per missing item: an e-invoice address the profile can
 * deliver to (`/customer/ean`), the buyer's VAT number for reverse-charge and intra-EU lines (`/customer/vatNumber`),
 * and a country the profile can name (`/customer/address/country`). Empty: the document can be built.
 */
export function missingForProfile(view: InvoiceDocumentView, profile: EInvoiceProfile): ErrorDetail[] {
  const missing: ErrorDetail[] = [];
  const address = eInvoiceAddress(view.buyer);
  if (!address) missing.push({ path: '/customer/ean', message: 'the customer had no e-invoice address (ean or peppolId) when the document was issued' });
  else if (profile === 'oioubl' && !oioublScheme(address.scheme)) {
    missing.push({ path: '/customer/ean', message: `OIOUBL delivers to a GLN, CVR or SE number; the customer's Peppol scheme ${address.scheme} is none of them` });
  }
  if (view.lines.some((l) => vatCategory(l.vatExemptionReason).needsBuyerVatNumber) && !buyerVatNumber(view)) {
    missing.push({ path: '/customer/vatNumber', message: "reverse-charge and intra-EU lines need the buyer's VAT number, which the customer lacked at issue" });
  }
  // OIOUBL allows each tax category once per document (F-LIB315), so it cannot tell two standard rates apart.
  if (profile === 'oioubl' && view.vatSummary.length > 1) {
    missing.push({ path: '/lines', message: `OIOUBL carries one standard VAT rate per document; this one has ${view.vatSummary.length}` });
  }
  if (countryCode(view.buyer.country) === null) {
    missing.push({ path: '/customer/address/country', message: 'must be a two-letter country code (or a known country name) for an e-invoice' });
  }
  return missing;
}

/** The buyer's VAT number: the one on file, or for a Danish company without one, DK + its CVR. */
function buyerVatNumber(view: InvoiceDocumentView): string | null {
  if (view.buyer.vatNumber) return view.buyer.vatNumber;
  return view.buyer.cvr && countryCode(view.buyer.country) === 'DK' ? `DK${view.buyer.cvr}` : null;
}

/** The e-invoice's bytes (UTF-8). Call only when `missingForProfile` is empty. */
export function buildEInvoice(source: EInvoiceSource, profile: EInvoiceProfile): Buffer {
  const missing = missingForProfile(source.view, profile);
  if (missing.length > 0) throw new Error(`the e-invoice cannot be built: ${missing.map((m) => m.path).join(', ')}`);
  const root = source.view.kind === 'creditNote' ? 'CreditNote' : 'Invoice';
  const body = profile === 'oioubl' ? oioubl(source) : peppol(source);
  const doc = create({ version: '1.0', encoding: 'UTF-8' }, {
    [root]: { '@xmlns': NS[root], '@xmlns:cac': NS.cac, '@xmlns:cbc': NS.cbc, ...body },
  });
  return Buffer.from(doc.end({ prettyPrint: true }), 'utf8');
}

// ---------------------------------------------------------------- shared pieces

const dkk = (oere: number): Xml => ({ '@currencyID': 'DKK', '#': amount(oere) });

/** The VAT breakdown: one subtotal per rate above 0, one per exemption reason, in the order the view lists them. */
function taxSubtotals(view: InvoiceDocumentView, category: (c: ReturnType<typeof vatCategory>, bps: number) => Xml): Xml[] {
  return [
    ...view.vatSummary.map((s) => ({ 'cbc:TaxableAmount': dkk(s.netOere), 'cbc:TaxAmount': dkk(s.vatOere), 'cac:TaxCategory': category(vatCategory(null), s.vatRateBps) })),
    ...view.exemptSummary.map((s) => ({ 'cbc:TaxableAmount': dkk(s.netOere), 'cbc:TaxAmount': dkk(0), 'cac:TaxCategory': category(vatCategory(s.reason), 0) })),
  ];
}

const pdfName = (view: InvoiceDocumentView): string => `${view.kind === 'creditNote' ? 'kreditnota' : 'faktura'}-${view.number}.pdf`;

/** A line's discount as Peppol writes it: an allowance of the discount's øre (reason code 95, discount). */
const lineDiscount = (l: InvoiceDocumentView['lines'][number]): Xml | undefined =>
  l.discountOere > 0
    ? { 'cbc:ChargeIndicator': 'false', 'cbc:AllowanceChargeReasonCode': '95', 'cbc:AllowanceChargeReason': 'Rabat', 'cbc:Amount': dkk(l.discountOere) }
    : undefined;

const without = (o: Xml): Xml => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));

// ---------------------------------------------------------------- Peppol BIS Billing 3.0

function peppol({ view, pdf, fik }: EInvoiceSource): Xml {
  const credit = view.kind === 'creditNote';
  const address = eInvoiceAddress(view.buyer)!;
  const seller = view.seller;
  const sellerCvr = seller.cvr!;
  const buyerCountry = countryCode(view.buyer.country)!;
  const buyerVat = buyerVatNumber(view);
  const category = (c: ReturnType<typeof vatCategory>, bps: number): Xml =>
    without({
      'cbc:ID': c.peppol,
      'cbc:Percent': percent(bps),
      'cbc:TaxExemptionReasonCode': c.exemption?.code,
      'cbc:TaxExemptionReason': c.exemption?.text,
      'cac:TaxScheme': TAX_SCHEME.peppol,
    });
  const intraEu = view.lines.some((l) => vatCategory(l.vatExemptionReason).peppol === 'K');
  const bank = !credit && seller.bankReg && seller.bankAccount ? { reg: seller.bankReg, account: seller.bankAccount } : null;
  const paymentMeans: Xml | undefined =
    !credit && fik
      ? {
          'cbc:PaymentMeansCode': PAYMENT_MEANS.fik.code,
          'cbc:PaymentID': `71#${fik.paymentId}`,
          'cac:PayeeFinancialAccount': { 'cbc:ID': fik.creditorNumber },
        }
      : bank
        ? {
            'cbc:PaymentMeansCode': PAYMENT_MEANS.bankAccount.code,
            'cbc:PaymentID': String(view.number),
            'cac:PayeeFinancialAccount': { 'cbc:ID': bank.account, 'cac:FinancialInstitutionBranch': { 'cbc:ID': bank.reg } },
          }
        : undefined;
  const paymentTerms = !credit && fik && bank ? { 'cbc:Note': `Eller bankoverførsel til reg.nr. ${bank.reg} konto ${bank.account}` } : undefined;
  const lineName = credit ? 'cac:CreditNoteLine' : 'cac:InvoiceLine';
  const quantityName = credit ? 'cbc:CreditedQuantity' : 'cbc:InvoicedQuantity';
  return without({
    'cbc:CustomizationID': 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0',
    'cbc:ProfileID': 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
    'cbc:ID': String(view.number),
    'cbc:IssueDate': view.issueDate,
    'cbc:DueDate': credit ? undefined : (view.dueDate ?? undefined),
    [credit ? 'cbc:CreditNoteTypeCode' : 'cbc:InvoiceTypeCode']: credit ? '381' : '380',
    'cbc:Note': view.message ?? undefined,
    'cbc:DocumentCurrencyCode': 'DKK',
    'cbc:BuyerReference': view.buyerReference ?? undefined,
    'cac:OrderReference': view.orderReference ? { 'cbc:ID': view.orderReference } : undefined,
    'cac:BillingReference': view.credits
      ? { 'cac:InvoiceDocumentReference': { 'cbc:ID': String(view.credits.number), 'cbc:IssueDate': view.credits.issueDate } }
      : undefined,
    'cac:AdditionalDocumentReference': {
      'cbc:ID': String(view.number),
      'cbc:DocumentDescription': credit ? 'Kreditnota' : 'Faktura',
      'cac:Attachment': {
        'cbc:EmbeddedDocumentBinaryObject': { '@mimeCode': 'application/pdf', '@filename': pdfName(view), '#': pdf.toString('base64') },
      },
    },
    'cac:AccountingSupplierParty': {
      'cac:Party': without({
        'cbc:EndpointID': { '@schemeID': '0184', '#': sellerCvr },
        'cac:PartyName': { 'cbc:Name': seller.name },
        'cac:PostalAddress': peppolAddress(seller, 'DK'),
        'cac:PartyTaxScheme': { 'cbc:CompanyID': `DK${sellerCvr}`, 'cac:TaxScheme': TAX_SCHEME.peppol },
        'cac:PartyLegalEntity': { 'cbc:RegistrationName': seller.name, 'cbc:CompanyID': { '@schemeID': '0184', '#': sellerCvr } },
        'cac:Contact': seller.email ? { 'cbc:ElectronicMail': seller.email } : undefined,
      }),
    },
    'cac:AccountingCustomerParty': {
      'cac:Party': without({
        'cbc:EndpointID': { '@schemeID': address.scheme, '#': address.identifier },
        'cac:PartyName': { 'cbc:Name': view.buyer.name },
        'cac:PostalAddress': peppolAddress(view.buyer, buyerCountry),
        'cac:PartyTaxScheme': buyerVat ? { 'cbc:CompanyID': buyerVat, 'cac:TaxScheme': TAX_SCHEME.peppol } : undefined,
        'cac:PartyLegalEntity': without({
          'cbc:RegistrationName': view.buyer.name,
          // A Danish company's CVR, scheme 0184 (DK-R-017); persons have none.
          'cbc:CompanyID': view.buyer.cvr && buyerCountry === 'DK' ? { '@schemeID': '0184', '#': view.buyer.cvr } : undefined,
        }),
        'cac:Contact': view.buyer.contactPerson ? { 'cbc:Name': view.buyer.contactPerson } : undefined,
      }),
    },
    // An intra-EU supply names where the goods went and when (BR-IC-11, BR-IC-12): the buyer's country, the issue date.
    'cac:Delivery': intraEu
      ? { 'cbc:ActualDeliveryDate': view.issueDate, 'cac:DeliveryLocation': { 'cac:Address': { 'cac:Country': { 'cbc:IdentificationCode': buyerCountry } } } }
      : undefined,
    'cac:PaymentMeans': paymentMeans,
    'cac:PaymentTerms': paymentTerms,
    'cac:TaxTotal': { 'cbc:TaxAmount': dkk(view.vatOere), 'cac:TaxSubtotal': taxSubtotals(view, category) },
    'cac:LegalMonetaryTotal': {
      'cbc:LineExtensionAmount': dkk(view.netOere),
      'cbc:TaxExclusiveAmount': dkk(view.netOere),
      'cbc:TaxInclusiveAmount': dkk(view.grossOere),
      'cbc:PayableAmount': dkk(view.grossOere),
    },
    [lineName]: view.lines.map((l, i) => {
      const c = vatCategory(l.vatExemptionReason);
      return without({
        'cbc:ID': String(i + 1),
        [quantityName]: { '@unitCode': unitCode(l.unit), '#': l.quantity },
        'cbc:LineExtensionAmount': dkk(l.netOere),
        'cac:AllowanceCharge': lineDiscount(l),
        'cac:Item': {
          'cbc:Name': l.description,
          'cac:ClassifiedTaxCategory': { 'cbc:ID': c.peppol, 'cbc:Percent': percent(l.vatRateBps), 'cac:TaxScheme': TAX_SCHEME.peppol },
        },
        'cac:Price': { 'cbc:PriceAmount': dkk(l.unitPriceOere) },
      });
    }),
  });
}

function peppolAddress(party: { street: string | null; city: string | null; postalCode: string | null }, country: string): Xml {
  return without({
    'cbc:StreetName': party.street ?? undefined,
    'cbc:CityName': party.city ?? undefined,
    'cbc:PostalZone': party.postalCode ?? undefined,
    'cac:Country': { 'cbc:IdentificationCode': country },
  });
}

// ---------------------------------------------------------------- OIOUBL 2.1

function oioubl({ id, view, pdf, fik }: EInvoiceSource): Xml {
  const credit = view.kind === 'creditNote';
  const address = eInvoiceAddress(view.buyer)!;
  const endpoint = oioublScheme(address.scheme)!;
  const buyerId = (v: string): Xml => without({ '@schemeAgencyID': endpoint.schemeAgencyID, '@schemeID': endpoint.schemeID, '#': `${endpoint.prefix}${cvrOf(v)}` });
  const seller = view.seller;
  const sellerCvr = `DK${seller.cvr!}`;
  const buyerCountry = countryCode(view.buyer.country)!;
  const buyerVat = buyerVatNumber(view);
  const category = (c: ReturnType<typeof vatCategory>, bps: number): Xml =>
    without({
      'cbc:ID': { '@schemeAgencyID': '320', '@schemeID': 'urn:oioubl:id:taxcategoryid-1.1', '#': c.oioubl },
      'cbc:Percent': percent(bps),
      'cbc:TaxExemptionReason': c.exemption?.text,
      'cac:TaxScheme': TAX_SCHEME.oioubl,
    });
  const paymentMeans: Xml[] = [];
  if (!credit && seller.bankReg && seller.bankAccount) {
    paymentMeans.push(
      without({
        'cbc:ID': String(paymentMeans.length + 1),
        'cbc:PaymentMeansCode': PAYMENT_MEANS.bankAccount.code,
        'cbc:PaymentDueDate': view.dueDate ?? undefined,
        'cbc:PaymentChannelCode': { '@listAgencyID': '320', '@listID': 'urn:oioubl:codelist:paymentchannelcode-1.1', '#': PAYMENT_MEANS.bankAccount.oioublChannel },
        'cac:PayeeFinancialAccount': {
          'cbc:ID': seller.bankAccount,
          'cbc:PaymentNote': `Faktura ${view.number}`,
          'cac:FinancialInstitutionBranch': { 'cbc:ID': seller.bankReg },
        },
      }),
    );
  }
  if (!credit && fik) {
    paymentMeans.push(
      without({
        'cbc:ID': String(paymentMeans.length + 1),
        'cbc:PaymentMeansCode': PAYMENT_MEANS.fik.code,
        'cbc:PaymentDueDate': view.dueDate ?? undefined,
        'cbc:PaymentChannelCode': { '@listAgencyID': '320', '@listID': 'urn:oioubl:codelist:paymentchannelcode-1.1', '#': PAYMENT_MEANS.fik.oioublChannel },
        'cbc:InstructionID': fik.paymentId,
        'cbc:PaymentID': { '@schemeAgencyID': '320', '@schemeID': 'urn:oioubl:id:paymentid-1.1', '#': '71' },
        'cac:CreditAccount': { 'cbc:AccountID': fik.creditorNumber },
      }),
    );
  }
  const lineName = credit ? 'cac:CreditNoteLine' : 'cac:InvoiceLine';
  const quantityName = credit ? 'cbc:CreditedQuantity' : 'cbc:InvoicedQuantity';
  return without({
    'cbc:UBLVersionID': '2.1',
    'cbc:CustomizationID': 'OIOUBL-2.1',
    'cbc:ProfileID': { '@schemeAgencyID': '320', '@schemeID': 'urn:oioubl:id:profileid-1.2', '#': 'urn:www.nesubl.eu:profiles:profile5:ver2.0' },
    'cbc:ID': String(view.number),
    'cbc:CopyIndicator': 'false',
    'cbc:UUID': id,
    'cbc:IssueDate': view.issueDate,
    'cbc:InvoiceTypeCode': credit ? undefined : { '@listAgencyID': '320', '@listID': 'urn:oioubl:codelist:invoicetypecode-1.1', '#': '380' },
    'cbc:Note': view.message ?? undefined,
    'cbc:DocumentCurrencyCode': 'DKK',
    'cac:OrderReference': view.orderReference || view.buyerReference ? { 'cbc:ID': view.orderReference ?? view.buyerReference } : undefined,
    'cac:BillingReference': view.credits ? { 'cac:InvoiceDocumentReference': { 'cbc:ID': String(view.credits.number), 'cbc:IssueDate': view.credits.issueDate } } : undefined,
    'cac:AdditionalDocumentReference': {
      'cbc:ID': pdfName(view),
      'cbc:DocumentType': credit ? 'Kreditnota (PDF)' : 'Faktura (PDF)',
      'cac:Attachment': {
        'cbc:EmbeddedDocumentBinaryObject': { '@encodingCode': 'Base64', '@mimeCode': 'application/pdf', '@filename': pdfName(view), '#': pdf.toString('base64') },
      },
    },
    'cac:AccountingSupplierParty': {
      'cac:Party': without({
        'cbc:EndpointID': { '@schemeID': 'DK:CVR', '#': sellerCvr },
        'cac:PartyIdentification': { 'cbc:ID': { '@schemeID': 'DK:CVR', '#': sellerCvr } },
        'cac:PartyName': { 'cbc:Name': seller.name },
        'cac:PostalAddress': oioublAddress(seller, 'DK'),
        'cac:PartyTaxScheme': { 'cbc:CompanyID': { '@schemeID': 'DK:SE', '#': sellerCvr }, 'cac:TaxScheme': TAX_SCHEME.oioubl },
        'cac:PartyLegalEntity': { 'cbc:RegistrationName': seller.name, 'cbc:CompanyID': { '@schemeID': 'DK:CVR', '#': sellerCvr } },
        'cac:Contact': seller.email ? { 'cbc:ElectronicMail': seller.email } : undefined,
      }),
    },
    'cac:AccountingCustomerParty': {
      'cac:Party': without({
        'cbc:EndpointID': buyerId(address.identifier),
        'cac:PartyIdentification': { 'cbc:ID': buyerId(address.identifier) },
        'cac:PartyName': { 'cbc:Name': view.buyer.name },
        'cac:PostalAddress': oioublAddress(view.buyer, buyerCountry),
        // A Danish VAT (SE) number by its scheme; another country's VAT number is scheme ZZZ (any other).
        'cac:PartyTaxScheme': buyerVat
          ? { 'cbc:CompanyID': { '@schemeID': /^DK[0-9]{8}$/.test(buyerVat) ? 'DK:SE' : 'ZZZ', '#': buyerVat }, 'cac:TaxScheme': TAX_SCHEME.oioubl }
          : undefined,
        // OIOUBL's legal entity is a Danish company's CVR; persons and foreign companies have none to give.
        'cac:PartyLegalEntity':
          view.buyer.cvr && buyerCountry === 'DK'
            ? { 'cbc:RegistrationName': view.buyer.name, 'cbc:CompanyID': { '@schemeID': 'DK:CVR', '#': `DK${view.buyer.cvr}` } }
            : undefined,
        // The buyer's reference is OIOUBL's "personreference": the contact's id, by which public buyers route.
        'cac:Contact': view.buyerReference || view.buyer.contactPerson
          ? without({ 'cbc:ID': view.buyerReference ?? undefined, 'cbc:Name': view.buyer.contactPerson ?? undefined })
          : undefined,
      }),
    },
    'cac:PaymentMeans': paymentMeans.length > 0 ? paymentMeans : undefined,
    'cac:TaxTotal': { 'cbc:TaxAmount': dkk(view.vatOere), 'cac:TaxSubtotal': oioublSubtotals(view, category) },
    'cac:LegalMonetaryTotal': {
      'cbc:LineExtensionAmount': dkk(view.netOere),
      // OIOUBL's TaxExclusiveAmount is the VAT total (the tax, "exclusive" of the lines), not the net.
      'cbc:TaxExclusiveAmount': dkk(view.vatOere),
      'cbc:TaxInclusiveAmount': dkk(view.grossOere),
      'cbc:PayableAmount': dkk(view.grossOere),
    },
    [lineName]: view.lines.map((l, i) => {
      const c = vatCategory(l.vatExemptionReason);
      const lineVat = lineVatOere(l);
      return without({
        'cbc:ID': String(i + 1),
        [quantityName]: { '@unitCode': unitCode(l.unit), '#': l.quantity },
        'cbc:LineExtensionAmount': dkk(l.netOere),
        'cac:TaxTotal': {
          'cbc:TaxAmount': dkk(lineVat),
          'cac:TaxSubtotal': { 'cbc:TaxableAmount': dkk(l.netOere), 'cbc:TaxAmount': dkk(lineVat), 'cac:TaxCategory': category(c, l.vatRateBps) },
        },
        'cac:Item': { 'cbc:Description': l.description, 'cbc:Name': l.description.slice(0, 40) },
        // OIOUBL checks the line amount against price × quantity alone (F-INV340), with no room for a line discount:
        // a discounted line states the price of its whole quantity, after the discount, so the two agree to the øre.
        'cac:Price':
          l.discountOere > 0
            ? { 'cbc:PriceAmount': dkk(l.netOere), 'cbc:BaseQuantity': { '@unitCode': unitCode(l.unit), '#': l.quantity } }
            : { 'cbc:PriceAmount': dkk(l.unitPriceOere), 'cbc:BaseQuantity': { '@unitCode': unitCode(l.unit), '#': '1' } },
      });
    }),
  });
}

/**
 * OIOUBL's VAT breakdown: one subtotal per category (F-LIB315): the standard rate (one, missingForProfile sees to
 * it), the zero-rated lines of every exemption reason that maps to ZeroRated together, and reverse charge.
 */
function oioublSubtotals(view: InvoiceDocumentView, category: (c: ReturnType<typeof vatCategory>, bps: number) => Xml): Xml[] {
  const subtotals: Xml[] = view.vatSummary.map((s) => ({
    'cbc:TaxableAmount': dkk(s.netOere),
    'cbc:TaxAmount': dkk(s.vatOere),
    'cac:TaxCategory': category(vatCategory(null), s.vatRateBps),
  }));
  const byCategory = new Map<string, { netOere: number; reasons: ReturnType<typeof vatCategory>[] }>();
  for (const s of view.exemptSummary) {
    const c = vatCategory(s.reason);
    const group = byCategory.get(c.oioubl) ?? { netOere: 0, reasons: [] };
    group.netOere += s.netOere;
    group.reasons.push(c);
    byCategory.set(c.oioubl, group);
  }
  for (const { netOere, reasons } of byCategory.values()) {
    const text = [...new Set(reasons.map((r) => r.exemption!.text))].join('; ');
    const c = { ...reasons[0]!, exemption: { code: reasons[0]!.exemption!.code, text } };
    subtotals.push({ 'cbc:TaxableAmount': dkk(netOere), 'cbc:TaxAmount': dkk(0), 'cac:TaxCategory': category(c, 0) });
  }
  return subtotals;
}

/** A line's own VAT, as the invoice's figures have it (the view keeps the line VAT the totals were computed with). */
const lineVatOere = (l: InvoiceDocumentView['lines'][number]): number =>
  l.vatOere ?? Math.round((l.netOere * l.vatRateBps) / 10_000);

function oioublAddress(party: { street: string | null; city: string | null; postalCode: string | null }, country: string): Xml {
  return without({
    'cbc:AddressFormatCode': { '@listAgencyID': '320', '@listID': 'urn:oioubl:codelist:addressformatcode-1.1', '#': 'StructuredLax' },
    'cbc:StreetName': party.street ?? undefined,
    'cbc:CityName': party.city ?? undefined,
    'cbc:PostalZone': party.postalCode ?? undefined,
    'cac:Country': { 'cbc:IdentificationCode': country },
  });
}

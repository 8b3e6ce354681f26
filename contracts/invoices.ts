import { Type, type Static } from 'typebox';
import { DateString, DateTimeString, ListQuery, Metadata, Nullable, Uuid, VatExemptionReason } from './common.ts';
import { CustomerCreate } from './customers.ts';

export const Discount = Type.Object(
  {
    type: Type.Union([Type.Literal('percent'), Type.Literal('amount')]),
    value: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Percent 0..100, or an amount in øre' }),
  },
  { additionalProperties: false, title: 'Discount' },
);

export const InvoiceLineInput = Type.Object(
  {
    description: Type.String({ minLength: 1, maxLength: 500 }),
    quantity: Type.Number({ exclusiveMinimum: 0, maximum: 999999, description: 'Decimal quantity, > 0' }),
    unitPriceOere: Type.Integer({ minimum: 0, maximum: 100_000_000_000 }),
    vatRateBps: Type.Optional(
      Type.Integer({
        minimum: Number.MIN_SAFE_INTEGER,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'VAT rate in basis points (2500 = 25 %); default 2500. Outside 0..10000 is 422 invalid_vat_rate.',
      }),
    ),
    vatExemptionReason: Type.Optional(Nullable(VatExemptionReason)),
    discount: Type.Optional(Nullable(Discount)),
    accountId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
    unit: Type.Optional(Nullable(Type.String({ maxLength: 20 }))),
  },
  { additionalProperties: false, title: 'InvoiceLineInput' },
);
export type InvoiceLineInput = Static<typeof InvoiceLineInput>;

const headerFields = {
  lines: Type.Array(InvoiceLineInput, { minItems: 1, maxItems: 100 }),
  dueDate: Type.Optional(DateString),
  paymentTermsDays: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 365 }))),
  customerReference: Type.Optional(Nullable(Type.String({ maxLength: 140 }))),
  senderReference: Type.Optional(Nullable(Type.String({ maxLength: 140 }))),
  buyerReference: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: "The buyer's reference (Peppol BT-10; a Danish public buyer's routing reference); printed. An e-invoice needs it or orderReference.",
      }),
    ),
  ),
  orderReference: Type.Optional(
    Nullable(Type.String({ minLength: 1, maxLength: 200, description: "The buyer's order number (BT-13); printed, and carried by the e-invoice" })),
  ),
  message: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  heading: Type.Optional(Nullable(Type.String({ maxLength: 60 }))),
  externalReference: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
  metadata: Type.Optional(Nullable(Metadata)),
};

export const InvoiceCreate = Type.Object(
  {
    customerId: Type.Optional(Uuid),
    customer: Type.Optional(CustomerCreate),
    ...headerFields,
  },
  {
    additionalProperties: false,
    title: 'InvoiceCreate',
    description: 'Give `customerId` or an inline `customer` (found by externalReference, then cvr, then email; else created).',
  },
);
export type InvoiceCreate = Static<typeof InvoiceCreate>;

export const InvoiceReplace = Type.Object(
  { customerId: Uuid, ...headerFields },
  { additionalProperties: false, title: 'InvoiceReplace', description: 'Full replacement of a draft.' },
);
export type InvoiceReplace = Static<typeof InvoiceReplace>;

export const InvoiceCreateQuery = Type.Object(
  {
    issue: Type.Optional(Type.Boolean({ description: 'Issue at once (number + locked PDF)' })),
    send: Type.Optional(Type.Boolean({ description: 'Issue and send by e-mail; implies issue=true' })),
  },
  { additionalProperties: false },
);

/** GET …/einvoice: the profile (docs/einvoicing.md); without one, OIOUBL for a buyer with an ean, else Peppol BIS 3. */
export const EInvoiceQuery = Type.Object(
  {
    profile: Type.Optional(
      Type.Union([Type.Literal('peppol-bis-3'), Type.Literal('oioubl')], {
        description: 'peppol-bis-3 (Peppol BIS Billing 3.0) or oioubl (OIOUBL 2.1); default oioubl when the issued buyer has an ean, else peppol-bis-3',
      }),
    ),
  },
  { additionalProperties: false },
);
export type EInvoiceQuery = Static<typeof EInvoiceQuery>;

export const IssueBody = Type.Object(
  { issueDate: Type.Optional(DateString), dueDate: Type.Optional(DateString) },
  { additionalProperties: false },
);
export type IssueBody = Static<typeof IssueBody>;

export const InvoiceLine = Type.Object({
  description: Type.String(),
  quantity: Type.Number(),
  unitPriceOere: Type.Integer(),
  vatRateBps: Type.Integer(),
  vatExemptionReason: Nullable(VatExemptionReason),
  discount: Nullable(Discount),
  accountId: Nullable(Type.String()),
  unit: Nullable(Type.String()),
  netOere: Type.Integer(),
  vatOere: Type.Integer(),
  grossOere: Type.Integer(),
}, { title: 'InvoiceLine' });

export const InvoiceStatus = Type.Union([
  Type.Literal('draft'),
  Type.Literal('issued'),
  Type.Literal('overdue'),
  Type.Literal('paid'),
  Type.Literal('collections'),
], { title: 'InvoiceStatus' });

export const Invoice = Type.Object(
  {
    id: Uuid,
    type: Type.Union([Type.Literal('invoice'), Type.Literal('creditNote')]),
    status: InvoiceStatus,
    number: Nullable(Type.Integer()),
    customerId: Uuid,
    issueDate: Nullable(DateString),
    dueDate: Nullable(DateString),
    paymentTermsDays: Nullable(Type.Integer()),
    currency: Type.Literal('DKK'),
    lines: Type.Array(InvoiceLine),
    netOere: Type.Integer(),
    vatOere: Type.Integer(),
    grossOere: Type.Integer(),
    paidOere: Type.Integer(),
    creditedOere: Type.Integer(),
    reminderFeeOere: Type.Integer(),
    interestOere: Type.Integer({ description: 'Late-payment interest posted so far (renteloven §§ 3 and 5); 0 while the organisation charges none' }),
    compensationOere: Type.Integer({ description: 'The 310 kr compensation charged on this invoice (renteloven § 9 a, stk. 3); 0 otherwise' }),
    interestAccruedOere: Type.Integer({ description: "Late-payment interest accrued since the last posting and not yet posted, up to and including the organisation's business today; not in balanceOere until posted (balanceOere + interestAccruedOere pays the invoice today)" }),
    balanceOere: Type.Integer({ description: 'grossOere + reminder fees + compensation + posted interest − paid − credited' }),
    customerReference: Nullable(Type.String()),
    senderReference: Nullable(Type.String()),
    buyerReference: Nullable(Type.String()),
    orderReference: Nullable(Type.String()),
    fik: Type.Union([
      Type.Object(
        {
          type: Type.Literal('71'),
          paymentId: Type.String({ description: '15 digits: the invoice number left-padded to 14, then its modulus-10 check digit' }),
          creditorNumber: Type.String({ description: 'The FI creditor number the invoice was issued under' }),
          line: Type.String({ description: '`+71<` paymentId `+` creditorNumber `<`, as printed' }),
        },
        { title: 'Fik' },
      ),
      Type.Null(),
    ], { description: 'The FI-kort +71 payment id, set at issue when the organisation has an FI creditor number; null otherwise. Never changes' }),
    message: Nullable(Type.String()),
    heading: Nullable(Type.String()),
    externalReference: Nullable(Type.String()),
    metadata: Nullable(Metadata),
    creditsInvoiceId: Nullable(Uuid),
    subscriptionId: Nullable(Type.String({ format: 'uuid', description: 'The subscription that made this invoice; null for any other' })),
    periodStart: Nullable(Type.String({ format: 'date', description: "The subscription period's first day; null unless subscriptionId is set" })),
    periodEnd: Nullable(Type.String({ format: 'date', description: "The subscription period's last day; null unless subscriptionId is set" })),
    createdAt: DateTimeString,
    updatedAt: DateTimeString,
    issuedAt: Nullable(DateTimeString),
    sentAt: Nullable(
      Type.String({
        format: 'date-time',
        description:
          'When the service took the invoice for sending by e-mail (`meta.send.status` "sent"); null before, and again after ' +
          'that mail finally failed (the timeline says why)',
      }),
    ),
  },
  { title: 'Invoice' },
);
export type Invoice = Static<typeof Invoice>;

export const InvoiceListQuery = Type.Object(
  {
    status: Type.Optional(InvoiceStatus),
    customerId: Type.Optional(Uuid),
    externalReference: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    ...ListQuery,
  },
  { additionalProperties: false },
);
export type InvoiceListQuery = Static<typeof InvoiceListQuery>;

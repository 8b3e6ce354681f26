import { Type, type Static } from 'typebox';
import { DateString, DateTimeString, ListQuery, Metadata, Nullable, Uuid, VatExemptionReason } from './common.ts';

export const SubscriptionInterval = Type.Object(
  {
    unit: Type.Union([Type.Literal('week'), Type.Literal('month'), Type.Literal('year')]),
    count: Type.Integer({ minimum: 1, maximum: 24 }),
  },
  { additionalProperties: false, title: 'SubscriptionInterval', description: 'A period is `count` weeks, months or years' },
);
export type SubscriptionInterval = Static<typeof SubscriptionInterval>;

export const SubscriptionLineInput = Type.Object(
  {
    description: Type.String({ minLength: 1, maxLength: 200 }),
    quantity: Type.Number({ exclusiveMinimum: 0, maximum: 100000, description: 'Decimal quantity, > 0' }),
    unitPriceOere: Type.Integer({ minimum: 0, maximum: 100_000_000 }),
    vatRateBps: Type.Optional(
      Type.Integer({
        minimum: Number.MIN_SAFE_INTEGER,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'VAT rate in basis points (2500 = 25 %); default 2500. Outside 0..10000 is 422 invalid_vat_rate.',
      }),
    ),
    vatExemptionReason: Type.Optional(Nullable(VatExemptionReason)),
  },
  { additionalProperties: false, title: 'SubscriptionLineInput' },
);
export type SubscriptionLineInput = Static<typeof SubscriptionLineInput>;

const Lines = Type.Array(SubscriptionLineInput, { minItems: 1, maxItems: 50 });
const Name = Type.String({ minLength: 1, maxLength: 120 });
const DueDays = Type.Integer({ minimum: 0, maximum: 365, description: 'Due date = issue date + dueDays; default 30' });
const ExternalReference = Type.String({ minLength: 1, maxLength: 200 });
const BuyerReference = Type.String({ minLength: 1, maxLength: 200, description: "Copied to every period's invoice as its buyerReference" });
const OrderReference = Type.String({ minLength: 1, maxLength: 200, description: "Copied to every period's invoice as its orderReference" });

export const SubscriptionCreate = Type.Object(
  {
    customerId: Uuid,
    name: Name,
    interval: SubscriptionInterval,
    startDate: DateString,
    endDate: Type.Optional(Nullable(DateString)),
    dueDays: Type.Optional(DueDays),
    autoSend: Type.Optional(Type.Boolean({ description: 'E-mail each invoice when issued (customers with an e-mail); default true' })),
    lines: Lines,
    externalReference: Type.Optional(Nullable(ExternalReference)),
    metadata: Type.Optional(Nullable(Metadata)),
    buyerReference: Type.Optional(Nullable(BuyerReference)),
    orderReference: Type.Optional(Nullable(OrderReference)),
  },
  { additionalProperties: false, title: 'SubscriptionCreate' },
);
export type SubscriptionCreate = Static<typeof SubscriptionCreate>;

export const SubscriptionPatch = Type.Object(
  {
    customerId: Type.Optional(Uuid),
    name: Type.Optional(Name),
    interval: Type.Optional(SubscriptionInterval),
    startDate: Type.Optional(DateString),
    endDate: Type.Optional(Nullable(DateString)),
    dueDays: Type.Optional(DueDays),
    autoSend: Type.Optional(Type.Boolean()),
    lines: Type.Optional(Lines),
    externalReference: Type.Optional(Nullable(ExternalReference)),
    metadata: Type.Optional(Nullable(Metadata)),
    buyerReference: Type.Optional(Nullable(BuyerReference)),
    orderReference: Type.Optional(Nullable(OrderReference)),
  },
  {
    additionalProperties: false,
    title: 'SubscriptionPatch',
    description: 'Partial: an omitted field is kept, `null` clears it, a value replaces it. Affects future periods only.',
  },
);
export type SubscriptionPatch = Static<typeof SubscriptionPatch>;

export const SubscriptionLine = Type.Object(
  {
    description: Type.String(),
    quantity: Type.Number(),
    unitPriceOere: Type.Integer(),
    vatRateBps: Type.Integer(),
    vatExemptionReason: Nullable(VatExemptionReason),
    netOere: Type.Integer(),
    vatOere: Type.Integer(),
    grossOere: Type.Integer(),
  },
  { title: 'SubscriptionLine' },
);
export type SubscriptionLine = Static<typeof SubscriptionLine>;

export const SubscriptionStatus = Type.Union([Type.Literal('active'), Type.Literal('paused'), Type.Literal('cancelled')], {
  title: 'SubscriptionStatus',
});

export const LatestSubscriptionInvoice = Type.Object(
  { id: Uuid, number: Type.Integer(), issueDate: DateString, periodStart: DateString, periodEnd: DateString },
  { title: 'LatestSubscriptionInvoice' },
);

export const Subscription = Type.Object(
  {
    id: Uuid,
    customerId: Uuid,
    name: Type.String(),
    interval: SubscriptionInterval,
    startDate: DateString,
    endDate: Nullable(DateString),
    dueDays: Type.Integer(),
    autoSend: Type.Boolean(),
    lines: Type.Array(SubscriptionLine),
    externalReference: Nullable(Type.String()),
    metadata: Nullable(Metadata),
    buyerReference: Nullable(Type.String()),
    orderReference: Nullable(Type.String()),
    status: SubscriptionStatus,
    nextInvoiceDate: Nullable(
      Type.String({
        format: 'date',
        description: 'The start of the next period to invoice; null while paused (the resume date decides it), cancelled or ended',
      }),
    ),
    invoiceCount: Type.Integer({ description: 'Invoices issued for this subscription' }),
    periodsBehind: Type.Integer({ description: 'Periods started on or before today and not invoiced yet (0 while paused)' }),
    latestInvoice: Nullable(LatestSubscriptionInvoice),
    createdAt: DateTimeString,
    updatedAt: DateTimeString,
    pausedAt: Nullable(Type.String({ format: 'date-time', description: 'When the current pause began; null unless paused' })),
    cancelledAt: Nullable(Type.String({ format: 'date-time', description: 'When POST …/cancel cancelled it' })),
    endedAt: Nullable(Type.String({ format: 'date-time', description: 'When it ended (last period invoiced or endDate passed)' })),
  },
  { title: 'Subscription' },
);
export type Subscription = Static<typeof Subscription>;

export const SubscriptionInvoicePreview = Type.Object(
  {
    date: Type.String({ format: 'date', description: 'The issue date the invoice will carry' }),
    periodStart: DateString,
    periodEnd: DateString,
    lines: Type.Array(SubscriptionLine),
    netOere: Type.Integer(),
    vatOere: Type.Integer(),
    grossOere: Type.Integer(),
  },
  { title: 'SubscriptionInvoicePreview' },
);
export type SubscriptionInvoicePreview = Static<typeof SubscriptionInvoicePreview>;

export const SubscriptionListQuery = Type.Object(
  {
    status: Type.Optional(SubscriptionStatus),
    customerId: Type.Optional(Uuid),
    externalReference: Type.Optional(ExternalReference),
    nextInvoiceBefore: Type.Optional(
      Type.String({ format: 'date', description: 'Only subscriptions whose nextInvoiceDate is on or before this date' }),
    ),
    ...ListQuery,
  },
  { additionalProperties: false },
);
export type SubscriptionListQuery = Static<typeof SubscriptionListQuery>;

export const SubscriptionInvoiceListQuery = Type.Object({ ...ListQuery }, { additionalProperties: false });
export type SubscriptionInvoiceListQuery = Static<typeof SubscriptionInvoiceListQuery>;

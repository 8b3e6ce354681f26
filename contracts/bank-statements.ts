import { Type, type Static } from 'typebox';
import { DateString, ListQuery, Nullable, Uuid } from './common.ts';

/** The largest camt.053 document POST /v1/bank-statements takes: 5 MiB (413 payload_too_large above). */
export const BANK_STATEMENT_BODY_LIMIT = 5 * 1024 * 1024;

/** What became of an entry (docs/bank-payments.md, "Bank statements (camt.053)"). */
export const BankEntryStatus = Type.Union(
  [Type.Literal('matched'), Type.Literal('unmatched'), Type.Literal('duplicate'), Type.Literal('ignored')],
  { title: 'BankEntryStatus' },
);
export type BankEntryStatus = Static<typeof BankEntryStatus>;

export const BankStatementCounts = Type.Object(
  {
    entries: Type.Integer({ description: 'Every entry of the document (a batch entry split into its transactions counts each)' }),
    matched: Type.Integer(),
    unmatched: Type.Integer(),
    duplicate: Type.Integer(),
    ignored: Type.Integer(),
  },
  { title: 'BankStatementCounts' },
);

export const BankStatement = Type.Object(
  {
    id: Uuid,
    accountId: Type.String({ description: 'The account the statements are of: its IBAN, else its other identification' }),
    statementIds: Type.Array(Type.String(), { description: "The statements' own ids (Stmt/Id), in document order" }),
    from: Nullable(DateString),
    to: Nullable(DateString),
    counts: BankStatementCounts,
  },
  { title: 'BankStatement' },
);
export type BankStatement = Static<typeof BankStatement>;

export const BankStatementEntry = Type.Object(
  {
    id: Uuid,
    bookingDate: Nullable(DateString),
    amountOere: Type.Integer({ description: 'Positive for money in (CRDT), negative for money out (DBIT); in hundredths of the entry\'s currency' }),
    reference: Nullable(Type.String({ description: 'The structured creditor reference (RmtInf/Strd/CdtrRefInf/Ref)' })),
    remittance: Nullable(Type.String({ description: 'The unstructured remittance text (RmtInf/Ustrd), lines joined by newlines' })),
    status: BankEntryStatus,
    invoiceId: Nullable(Uuid),
    paymentId: Nullable(Uuid),
  },
  {
    title: 'BankStatementEntry',
    description:
      'One entry of an imported statement (a batch entry: one of its transactions). `status`: `matched` (booked as a payment on ' +
      'an invoice), `unmatched` (a booked DKK credit no rule tied to one invoice: match it by hand), `duplicate` (imported ' +
      'before, books nothing), `ignored` (not money in for an invoice: a debit, not booked, not DKK).',
  },
);
export type BankStatementEntry = Static<typeof BankStatementEntry>;

export const BankStatementEntryListQuery = Type.Object({ status: Type.Optional(BankEntryStatus), ...ListQuery }, { additionalProperties: false });
export type BankStatementEntryListQuery = Static<typeof BankStatementEntryListQuery>;

export const BankStatementEntryMatch = Type.Object(
  { invoiceId: Uuid },
  { additionalProperties: false, title: 'BankStatementEntryMatch' },
);
export type BankStatementEntryMatch = Static<typeof BankStatementEntryMatch>;

import type { PendingQuery, Row } from 'postgres';
import type { Queryable } from '../shared/db.ts';
import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The invoice lifecycle as data: the statuses an invoice row can hold, which of them are open, and every transition
 * between them with the states it may start from. A use case that changes an invoice's status does it through
 * `transitionInvoice`, a guarded UPDATE that refuses (with the use case's own error) a row that was not in one of the
 * transition's from-states, so a status is never overwritten by a write that read it earlier, and never silently
 * left as it was.
 *
 *   draft → issuing → issued → (overdue →) collections, and any open status → paid; INVOICE_TRANSITIONS below.
 *
 * - `issuing` is the short stretch between reserving an issue's number and storing its PDF (issue-invoice.ts,
 *   finish-issue.ts); readers show it as a locked draft.
 * - `overdue` and `collections` are stored statuses, written by the engines and not derived from the due date on read
 *   (docs/api-conventions.md, "Invoices and credit notes", Statuses): the reminder engine writes `overdue` with the
 *   first reminder of an invoice (`remind`), the collection hand-over writes `collections` (`handOver`). An invoice
 *   past its due date that no reminder has acted on is still `issued`; queries that need "past due" ask for an open
 *   status and `due_date < today`.
 * - `paid` is written only by the payment that brings a positive balance to 0 or below (book-payment.ts); the
 *   customer balance relies on a `paid` invoice's balance never being above 0 (balance-queries.ts).
 * - A credit note changes no status: the credited invoice stays where it is (docs/api-conventions.md: a fully credited
 *   invoice stays `issued` with balance 0), and the credit note itself is inserted as `issued` and never changes
 *   (credit-invoice.ts). New drafts are inserted as `draft` (create-invoice.ts); a draft is deleted, never moved back.
 *
 * The same lists live in SQL, where this module cannot reach them, and test/unit/invoice-lifecycle.test.ts checks
 * that they agree: the CHECK on invoices.status (002_invoices.sql), the partial indexes of open invoices and the
 * trigger that takes fees on open invoices only (004_payments.sql). Triggers only read the status today; one that
 * writes it would stay in SQL (it runs inside the statement that fires it) and belongs in this list.
 */

export const INVOICE_STATUSES = ['draft', 'issuing', 'issued', 'overdue', 'paid', 'collections'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** Not issued yet: no number a reader may see, no PDF, not payable, not creditable. */
export const UNISSUED_STATUSES = ['draft', 'issuing'] as const satisfies readonly InvoiceStatus[];

/** Open: issued and not settled, so it can be overdue, carry fees, and make its customer past due. */
export const OPEN_STATUSES = ['issued', 'overdue', 'collections'] as const satisfies readonly InvoiceStatus[];

/** Issued and neither in collections nor settled: the reminder engine acts on these. */
export const REMINDABLE_STATUSES = ['issued', 'overdue'] as const satisfies readonly InvoiceStatus[];

export const isIssued = (status: InvoiceStatus): boolean => !(UNISSUED_STATUSES as readonly InvoiceStatus[]).includes(status);

export const isOpen = (status: InvoiceStatus): boolean => (OPEN_STATUSES as readonly InvoiceStatus[]).includes(status);

interface Transition {
  from: readonly InvoiceStatus[];
  to: InvoiceStatus;
}

export const INVOICE_TRANSITIONS = {
  /** Issuing, step 1: the number is taken and the content frozen (issue-invoice.ts). */
  reserveIssue: { from: ['draft'], to: 'issuing' },
  /** Issuing, steps 2 and 3: the PDF is stored with the number (finish-issue.ts). */
  finishIssue: { from: ['issuing'], to: 'issued' },
  /** The first reminder of any kind (the reminder engine); later reminders leave the status as it is. */
  remind: { from: ['issued'], to: 'overdue' },
  /** The hand-over to debt collection (POST …/collect, or the engine's collections step). */
  handOver: { from: ['issued', 'overdue'], to: 'collections' },
  /** A payment brings a positive balance to 0 or below (book-payment.ts). */
  settle: { from: OPEN_STATUSES, to: 'paid' },
} as const satisfies Record<string, Transition>;

export type InvoiceTransition = keyof typeof INVOICE_TRANSITIONS;

/** The lifecycle in the kit's terms (services/shared/lifecycle.ts): the guarded UPDATE and the state lists. */
export const INVOICE_LIFECYCLE = defineLifecycle({
  name: 'invoice',
  table: 'invoices',
  column: 'status',
  stateNoun: 'status',
  states: INVOICE_STATUSES,
  transitions: INVOICE_TRANSITIONS,
});

/** Each status by name (`INVOICE_STATUS.paid`): how code outside this module names one status. */
export const INVOICE_STATUS = INVOICE_LIFECYCLE.state;

/**
 * A list of statuses as SQL text, `('issued', 'overdue', 'collections')`. Only ever built from this module's
 * constants, never from input, so it is safe to splice into a statement.
 */
export const statusListSql = (statuses: readonly InvoiceStatus[]): string => INVOICE_LIFECYCLE.inList(statuses);

const OPEN_STATUS_LIST = statusListSql(OPEN_STATUSES);
const NOT_SETTLED_LIST = statusListSql([...UNISSUED_STATUSES, ...OPEN_STATUSES]);

type SqlFragment = PendingQuery<Row[]>;

/**
 * `status IN ${openStatuses(sql)}`: the open statuses written into the statement's text, not bound as a parameter.
 * The partial indexes of open invoices (004_payments.sql: `WHERE type = 'invoice' AND status IN ('issued', 'overdue',
 * 'collections')`) are only usable when the planner can prove from the query's own text that its condition implies
 * theirs, also in a generic plan of a prepared statement; a parameter (`= ANY($1)`) would hide the list from it.
 */
export const openStatuses = (sql: Queryable): SqlFragment => sql.unsafe(OPEN_STATUS_LIST);

/**
 * `status NOT IN ${notSettledStatuses(sql)}`: every status but `paid`, spelled out as the unissued and the open
 * ones, so the condition reads as what it excludes and follows the lists if a status is ever added.
 */
export const notSettledStatuses = (sql: Queryable): SqlFragment => sql.unsafe(NOT_SETTLED_LIST);

export interface TransitionedInvoice {
  status: InvoiceStatus;
  updated_at: Date;
}

/**
 * Moves one invoice along `transition`: `UPDATE … SET status = <to> … WHERE status IN (<from-states>) RETURNING …`.
 * A row that is not (or no longer) in a from-state, or does not exist, is refused with `refused()`, the use case's
 * own error (e.g. 422 invoice_not_editable for an issue of a non-draft). `set` adds the columns the transition writes
 * with the status (the issue's number and dates, the PDF's hash); updated_at is always set.
 *
 * The statement is sent when this is called, not when the result is awaited, so a caller that pipelines several
 * statements (book-payment.ts) keeps their order. Callers usually hold the row's lock and have checked its status
 * already, for a precise message; the guard is what makes the write correct without that.
 */
export function transitionInvoice(
  sql: Queryable,
  organizationId: string,
  invoiceId: string,
  transition: InvoiceTransition,
  opts: { set?: SqlFragment; refused: () => Error },
): Promise<TransitionedInvoice> {
  return INVOICE_LIFECYCLE.transition(sql, invoiceId, transition, { organizationId, set: opts.set, refused: opts.refused, returning: 'updated_at' }).then(
    (r) => ({ status: r.to, updated_at: r.row.updated_at as Date }),
  );
}

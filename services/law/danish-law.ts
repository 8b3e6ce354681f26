import { addDays } from '../shared/clock.ts';

/**
 * The Danish statutes the product applies, each number and predicate written once, with the provision it comes from
 * (docs/reminders.md, "The law"). Every module that charges a fee, dates a deadline, refuses a time-barred claim or
 * checks an invoice's seller details imports it from here; a SQL statement that needs one takes it as a parameter.
 *
 * `LAW` names each provision a dunning or collection step can be decided by, as a stable id and its words: a taken
 * step's journaled result cites them (`rule`, reminder-policy.ts), so the Restate UI shows why a step was taken.
 *
 * Dates are 'YYYY-MM-DD' business dates (Europe/Copenhagen).
 */

/** A rule a step was decided by: a stable id (for queries over journals) and what it says, with its source. */
export interface Rule {
  id: string;
  text: string;
}

/**
 * Why a taken step was taken when it was and cost what it did, as its journaled result carries it: the ids of the
 * rule that decided its date and of the one that decided its fee (null for a step without a fee), and their words.
 * Results journaled before this was added have no `rule`; whatever reads them treats it as optional.
 */
export interface StepRule {
  date: string;
  fee: string | null;
  text: string;
}

export const citeRules = (date: Rule, fee: Rule | null): StepRule => ({
  date: date.id,
  fee: fee?.id ?? null,
  text: fee === null || fee.id === date.id ? date.text : `${date.text} ${fee.text}`,
});

// ---------------------------------------------------------------------------------------------------------------
// Renteloven § 9 b: reminder fees.

/** § 9 b stk. 1: a reminder may cost at most 100 kr. A plan's `'statutory'` fee, and the settings' `feeOere: null`. */
export const STATUTORY_FEE_OERE = 10_000;

/** § 9 b stk. 2: fees may be charged for at most three reminders on the same claim (a fourth is free). */
export const FEE_REMINDERS_PER_INVOICE = 3;

/**
 * Numbered reminders per invoice, ever, whatever a plan or a manual request says: no more than § 9 b stk. 2 allows
 * fees for (the last of them is the påkrav). The reminder settings and a reminder flow hold at most this many.
 */
export const MAX_NUMBERED_REMINDERS = FEE_REMINDERS_PER_INVOICE;

/**
 * § 9 b stk. 2, read per debtor: at most three fee-bearing reminders in one continuous arrears of the customer,
 * counted across their invoices (docs/reminders.md).
 */
export const FEE_REMINDERS_PER_ARREARS = 3;

/** § 9 b stk. 2: at least 10 days between fee-bearing reminders; a reminder sent sooner is free. */
export const FEE_INTERVAL_DAYS = 10;

/** The first day a further fee-bearing reminder may be sent after one sent on `sentOn` (§ 9 b stk. 2). */
export const nextFeeAllowedOn = (sentOn: string): string => addDays(sentOn, FEE_INTERVAL_DAYS);

/**
 * § 9 b stk. 3: the collection fee (inkassogebyr, 100 kr) a hand-over to debt collection adds, which every demand
 * letter warns of.
 */
export const COLLECTION_FEE_OERE = 10_000;

// ---------------------------------------------------------------------------------------------------------------
// Inkassoloven § 10: the demand for payment (påkrav) before debt collection.

/**
 * § 10 stk. 1: the påkrav gives the debtor at least 10 days to pay. Every reminder carries the same deadline, since
 * the plan's last reminder is the påkrav (docs/reminders.md). The CHECK on collection_cases.paakrav_frist
 * (016_collection_cases.sql, applied and never changed) holds the same floor.
 */
export const PAAKRAV_DEADLINE_DAYS = 10;

/** § 10: the hand-over to debt collection comes the day after the deadline has fully run (påkrav date + 11). */
export const HAND_OVER_AFTER_DAYS = PAAKRAV_DEADLINE_DAYS + 1;

/** The payment deadline of a påkrav, or of any reminder, sent on `sentOn`. */
export const paakravDeadline = (sentOn: string): string => addDays(sentOn, PAAKRAV_DEADLINE_DAYS);

/** The first day a claim whose påkrav was sent on `sentOn` may be handed to debt collection. */
export const handOverDay = (sentOn: string): string => addDays(sentOn, HAND_OVER_AFTER_DAYS);

// ---------------------------------------------------------------------------------------------------------------
// Forældelsesloven § 3: the limitation period.

/** § 3 stk. 1: a claim is time-barred 3 years after its due date. */
export const LIMITATION_YEARS = 3;

/** The day a claim due on `dueDate` is time-barred (§ 3: 3 years; 29 February → 28 February, the earlier day). */
export function timeBarredOn(dueDate: string): string {
  const [y, m, d] = dueDate.split('-').map(Number) as [number, number, number];
  const year = y + LIMITATION_YEARS;
  const lastDay = new Date(Date.UTC(year, m, 0)).getUTCDate();
  return `${String(year).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(Math.min(d, lastDay)).padStart(2, '0')}`;
}

/** Whether a claim due on `dueDate` is time-barred on `on`: no fee, no collection. */
export const isTimeBarred = (dueDate: string, on: string): boolean => on >= timeBarredOn(dueDate);

// ---------------------------------------------------------------------------------------------------------------
// Renteloven §§ 3, 5 and 9 a: late-payment interest and the compensation between businesses.

/**
 * § 5 stk. 1: the statutory rate is the reference rate + 8 percentage points, in basis points (hundredths of a
 * percent).
 */
export const STATUTORY_INTEREST_MARGIN_BP = 800;

/**
 * § 5 stk. 2: the reference rate in force on 1 January applies for January to June, the one on 1 July for July to
 * December. The first day of the half-year containing `date`.
 */
export const halfYearOf = (date: string): string => `${date.slice(0, 4)}-${date.slice(5, 7) <= '06' ? '01' : '07'}-01`;

/** The half-year after the one starting `from` (a 1 January or 1 July). */
export const nextHalfYear = (from: string): string =>
  from.slice(5, 7) === '01' ? `${from.slice(0, 4)}-07-01` : `${String(Number(from.slice(0, 4)) + 1).padStart(4, '0')}-01-01`;

/** The statutory rate of a half-year whose reference rate is `referenceRateBp`. */
export const statutoryRateBp = (referenceRateBp: number): number => referenceRateBp + STATUTORY_INTEREST_MARGIN_BP;

/** Interest for one day is the principal × the yearly rate / 365, in every year (no 366 in a leap year). */
export const INTEREST_DAYS_PER_YEAR = 365;

/** § 9 a stk. 3: the fixed compensation a business debtor owes for a late payment: 310 kr, no VAT. */
export const COMPENSATION_OERE = 31_000;

// ---------------------------------------------------------------------------------------------------------------
// The provisions a step cites, from the numbers above.

export const LAW = {
  feeCap: {
    id: 'renteloven-9b-100-kr',
    text: `Renteloven § 9 b, stk. 1: a reminder may cost at most ${STATUTORY_FEE_OERE / 100} kr.`,
  },
  feeInterval: {
    id: 'renteloven-9b-10-days',
    text: `Renteloven § 9 b, stk. 2: at least ${FEE_INTERVAL_DAYS} days between fee-bearing reminders; a reminder sent sooner is free.`,
  },
  feesPerClaim: {
    id: 'renteloven-9b-3-per-claim',
    text: `Renteloven § 9 b, stk. 2: fees for at most ${FEE_REMINDERS_PER_INVOICE} reminders on the same claim; a further one is free.`,
  },
  feesPerArrears: {
    id: 'renteloven-9b-3-per-arrears',
    text: `Renteloven § 9 b, stk. 2: at most ${FEE_REMINDERS_PER_ARREARS} fee-bearing reminders in one continuous arrears of the debtor, across their invoices; a further one is free.`,
  },
  timeBarred: {
    id: 'foraeldelsesloven-3-time-barred',
    text: `Forældelsesloven § 3, stk. 1: the claim is time-barred ${LIMITATION_YEARS} years after its due date; no fee and no collection.`,
  },
  limitation: {
    id: 'foraeldelsesloven-3-warning',
    text: `Forældelsesloven § 3, stk. 1: the claim becomes time-barred ${LIMITATION_YEARS} years after its due date; the creditor is warned before.`,
  },
  paakravDeadline: {
    id: 'inkassoloven-10-10-days',
    text: `Inkassoloven § 10, stk. 1: the påkrav gives the debtor at least ${PAAKRAV_DEADLINE_DAYS} days to pay before debt collection.`,
  },
  handOver: {
    id: 'inkassoloven-10-hand-over',
    text: `Inkassoloven § 10: the claim goes to debt collection the day after the påkrav's ${PAAKRAV_DEADLINE_DAYS}-day deadline has fully run (the påkrav date + ${HAND_OVER_AFTER_DAYS} days).`,
  },
} as const satisfies Record<string, Rule>;

// ---------------------------------------------------------------------------------------------------------------
// Momsbekendtgørelsen § 58: what an invoice must show of its seller.

/** The seller's details as an invoice or credit note carries them. */
export interface SellerDetails {
  name: string | null;
  street: string | null;
  postalCode: string | null;
  city: string | null;
  cvr: string | null;
}

/**
 * § 58 stk. 1: an invoice, and a credit note likewise, shows the seller's name, address and CVR number; in the order
 * a refusal reports them.
 */
export const REQUIRED_SELLER_DETAILS = ['name', 'street', 'postalCode', 'city', 'cvr'] as const satisfies readonly (keyof SellerDetails)[];

/** The § 58 details the seller lacks (blank counts as missing), in `REQUIRED_SELLER_DETAILS` order. */
export const missingSellerDetails = (seller: SellerDetails): (keyof SellerDetails)[] =>
  REQUIRED_SELLER_DETAILS.filter((field) => !seller[field]?.trim());

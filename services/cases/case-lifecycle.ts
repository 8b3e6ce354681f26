import type { EventType } from '../../contracts/events.ts';

/**
 * The collection case lifecycle as data (reminders-and-collection.md, "Collect and collection cases"): the states a
 * case row can hold, the cross-cutting `status` each state shows, and every transition with the states it may start
 * from and the `sag.*` event it writes. The durable case workflow moves cases through these transitions; the API
 * only creates cases (in `OPRETTET`) and reads them.
 *
 *   OPRETTET → PAAKRAV_SENDT → OVERDRAGET → AFSLUTTET; TILBAGEKALDT from any state before AFSLUTTET.
 *
 * - `sendPaakrav`: the påkrav date is the invoice's demand letter's sent date, or the day the case sends one itself;
 *   `paakravFrist` = påkrav date + 10 days (Inkassoloven § 10).
 * - `handOver`: on the påkrav date + 11 days, never earlier: the case goes to the collection partner.
 * - `settle`: payment of the whole balance, in any open state.
 * - `withdraw`: the operator's withdraw-case command, before AFSLUTTET.
 *
 * Every transition writes its own event; a transition that changes `status` writes `sag.status_aendret` after it
 * (`eventsFor`). `eventVersion` of the status read counts them all. The state list is also the CHECK on
 * collection_cases.state (016_collection_cases.sql); test/unit/case-lifecycle.test.ts checks they agree.
 */

/** The `sag.*` event types: every event of a case's family. */
export type CaseEventType = Extract<EventType, `sag.${string}`>;

export const CASE_STATES = ['OPRETTET', 'PAAKRAV_SENDT', 'OVERDRAGET', 'AFSLUTTET', 'TILBAGEKALDT'] as const;
export type CaseState = (typeof CASE_STATES)[number];

export const CASE_STATUSES = ['aktiv', 'afventer', 'lukket'] as const;
export type CaseStatus = (typeof CASE_STATUSES)[number];

/** The cross-cutting status of each state, as decided: aktiv, afventer while the påkrav deadline runs, lukket at the end. */
export const CASE_STATUS_OF: { readonly [S in CaseState]: CaseStatus } = {
  OPRETTET: 'aktiv',
  PAAKRAV_SENDT: 'afventer',
  OVERDRAGET: 'aktiv',
  AFSLUTTET: 'lukket',
  TILBAGEKALDT: 'lukket',
};

export const caseStatusOf = (state: CaseState): CaseStatus => CASE_STATUS_OF[state];

/** The states a case starts in and can still move from. */
export const INITIAL_CASE_STATE = 'OPRETTET' as const satisfies CaseState;
export const OPEN_CASE_STATES = ['OPRETTET', 'PAAKRAV_SENDT', 'OVERDRAGET'] as const satisfies readonly CaseState[];
export const CLOSED_CASE_STATES = ['AFSLUTTET', 'TILBAGEKALDT'] as const satisfies readonly CaseState[];

export const isCaseClosed = (state: CaseState): boolean => (CLOSED_CASE_STATES as readonly CaseState[]).includes(state);

interface CaseTransition {
  from: readonly CaseState[];
  to: CaseState;
  event: CaseEventType;
}

export const CASE_TRANSITIONS = {
  /** The påkrav is sent (or was, as the invoice's last reminder): its date and deadline are set. */
  sendPaakrav: { from: ['OPRETTET'], to: 'PAAKRAV_SENDT', event: 'sag.paakrav_sendt' },
  /** Handed to the collection partner, on the påkrav date + 11 days at the earliest. */
  handOver: { from: ['PAAKRAV_SENDT'], to: 'OVERDRAGET', event: 'sag.overdraget' },
  /** The whole balance is paid (`sag.betaling_modtaget` of that payment comes before it). */
  settle: { from: OPEN_CASE_STATES, to: 'AFSLUTTET', event: 'sag.afsluttet' },
  /** The operator withdraws the case. */
  withdraw: { from: OPEN_CASE_STATES, to: 'TILBAGEKALDT', event: 'sag.tilbagekaldt' },
} as const satisfies Record<string, CaseTransition>;

export type CaseTransitionName = keyof typeof CASE_TRANSITIONS;

/** Whether `transition` may start from `state`. */
export const canTransition = (state: CaseState, transition: CaseTransitionName): boolean =>
  (CASE_TRANSITIONS[transition].from as readonly CaseState[]).includes(state);

/**
 * The `sag.*` events a transition from `from` writes, in order: its own event, then `sag.status_aendret` when the
 * status changes. Throws for a transition that may not start from `from`.
 */
export function eventsFor(from: CaseState, transition: CaseTransitionName): CaseEventType[] {
  if (!canTransition(from, transition)) throw new Error(`case transition ${transition} cannot start from ${from}`);
  const t = CASE_TRANSITIONS[transition];
  return caseStatusOf(from) === caseStatusOf(t.to) ? [t.event] : [t.event, 'sag.status_aendret'];
}

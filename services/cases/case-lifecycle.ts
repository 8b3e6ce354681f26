import type { CaseEventData } from '../../contracts/event-catalogue.ts';
import type { EventType } from '../../contracts/events.ts';
import { recordEvent, type EventRecord } from '../events/record-event.ts';
import { defineLifecycle } from '../shared/lifecycle.ts';

/**
 * The collection case lifecycle as data (docs/collections.md, "The case lifecycle"): the states a
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
 * (`eventsFor`), through the kit's events hook (`CASE_LIFECYCLE`). `eventVersion` of the status read counts them all.
 * The state list is also the CHECK on collection_cases.state (016_collection_cases.sql); test/unit/case-lifecycle.test.ts
 * and test/unit/lifecycles.test.ts check they agree.
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

/** The state a case starts in (its INSERT), and the states it can still move from. */
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

/** The facts of a case row its events carry. */
export interface CaseEventFacts {
  case_number: number | string;
  external_reference: string | null;
  invoice_id: string | null;
  state: CaseState;
}

/** The event payload of a case in `state`: no personal data. */
export const caseEventData = (c: CaseEventFacts, state: CaseState = c.state): CaseEventData => ({
  caseNumber: Number(c.case_number),
  state,
  status: caseStatusOf(state),
  fakturaId: c.invoice_id,
  externalReference: c.external_reference,
});

/**
 * The lifecycle in the kit's terms (services/shared/lifecycle.ts). Every transition reads the state it left and
 * writes its `sag.*` events (`eventsFor`) after the guarded UPDATE, in the caller's transaction; what it answers
 * (`written`) is the sekvensnummer of the last one, the case's eventVersion now.
 */
export const CASE_LIFECYCLE = defineLifecycle({
  name: 'case',
  table: 'collection_cases',
  column: 'state',
  states: CASE_STATES,
  transitions: CASE_TRANSITIONS,
  readFrom: true,
  returning: 'case_number, external_reference, invoice_id',
  async onTransition(sql, moved): Promise<number> {
    const facts = { ...(moved.row as Omit<CaseEventFacts, 'state'>), state: moved.to };
    let eventVersion = 0;
    for (const type of eventsFor(moved.from!, moved.transition)) {
      const e = await recordEvent(sql, { organizationId: moved.organizationId!, type, entityId: String(moved.id), data: caseEventData(facts) } as EventRecord<CaseEventType>);
      eventVersion = e.sekvensnummer;
    }
    return eventVersion;
  },
});

/** Whether `transition` may start from `state`. */
export const canTransition = (state: CaseState, transition: CaseTransitionName): boolean => CASE_LIFECYCLE.can(state, transition);

/**
 * The `sag.*` events a transition from `from` writes, in order: its own event, then `sag.status_aendret` when the
 * status changes. Throws for a transition that may not start from `from`.
 */
export function eventsFor(from: CaseState, transition: CaseTransitionName): CaseEventType[] {
  if (!canTransition(from, transition)) throw new Error(`case transition ${transition} cannot start from ${from}`);
  const t = CASE_TRANSITIONS[transition];
  return caseStatusOf(from) === caseStatusOf(t.to) ? [t.event] : [t.event, 'sag.status_aendret'];
}

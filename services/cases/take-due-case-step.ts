import { WORK } from '../../contracts/workflows.ts';
import { clearWake, scheduleWake } from '../clock/wake-index.ts';
import { recordEvent } from '../events/record-event.ts';
import type { StepRule } from '../law/danish-law.ts';
import type { Db, Queryable } from '../shared/db.ts';
import { isUuid } from '../shared/ids.ts';
import { CASE_LIFECYCLE, INITIAL_CASE_STATE, isCaseClosed, OPEN_CASE_STATES, type CaseState } from './case-lifecycle.ts';
import { caseStepRule, nextCaseStep, paakravDates, type LastReminder } from './case-policy.ts';
import { caseEventData, lockCase, transitionCase } from './transition-case.ts';
import { recordCaseStep } from '../observability/metrics.ts';

/**
 * The collection case lifecycle's steps (docs/collections.md, "The case lifecycle"), for the Case workflow
 * (workflows/case.ts), each in one transaction with the case's row locked, on the organisation's business today: the
 * facts are read here, the decision is case-policy.ts's, and this applies it. The case's wake-index row is its
 * schedule: due now while a step is to take, at the start of the hand-over day while the påkrav deadline runs, gone
 * once nothing more is timed.
 *
 * - the invoice's demand letter was the påkrav: PAAKRAV_SENDT at once, dated its sent day;
 * - the case sends its own påkrav: the workflow renders and delivers it (durable steps), then `recordCasePaakrav`
 *   commits PAAKRAV_SENDT with that date;
 * - the hand-over day has come: the workflow hands the case over (`handOverCase`, once: the document's handOverId is
 *   stable) and `recordCaseHandOver` commits OVERDRAGET after the partner answered.
 *
 * Safe to repeat: everything is read back from the database each time.
 *
 * Each step but `done` names the rule that decided its date (`rule`, case-policy.ts's `caseStepRule`), so its
 * journaled result says why; results journaled before `rule` existed lack it, so it is optional.
 */
export type CaseStep =
  | { kind: 'done'; state: CaseState | null }
  | { kind: 'wait'; date: string; rule?: StepRule }
  /** The påkrav is recorded (the invoice's demand letter was it): the next wake waits for the hand-over day. */
  | { kind: 'paakrav_recorded'; sentOn: string; rule?: StepRule }
  /** The case sends its own påkrav, dated `sentOn`. */
  | { kind: 'send_paakrav'; sentOn: string; rule?: StepRule }
  /** The hand-over day has come. */
  | { kind: 'hand_over'; handedOverOn: string; rule?: StepRule };

/** Lists the case's lifecycle as due at the start of `date` (business time, Europe/Copenhagen), or ends it. */
export async function scheduleCase(sql: Queryable, organizationId: string, caseId: string, date: string | null): Promise<void> {
  const target = WORK.collectionCase(organizationId, caseId);
  if (date === null) {
    await clearWake(sql, target);
    return;
  }
  const [start] = await sql<{ at: Date }[]>`SELECT (${date}::date)::timestamp AT TIME ZONE 'Europe/Copenhagen' AS at`;
  await scheduleWake(sql, organizationId, target, start!.at);
}

const businessToday = async (sql: Queryable, organizationId: string): Promise<string> => {
  const [row] = await sql<{ today: string }[]>`SELECT business_today(${organizationId})::text AS today`;
  return row!.today;
};

export async function takeDueCaseStep(db: Db, organizationId: string, caseId: string): Promise<CaseStep> {
  const step = await db.tx(async (tx): Promise<CaseStep> => {
    const c = await lockCase(tx, organizationId, caseId);
    if (!c) {
      await scheduleCase(tx, organizationId, caseId, null);
      return { kind: 'done', state: null };
    }
    const lastReminder = c.state === INITIAL_CASE_STATE && c.invoice_id ? await lastNumberedReminder(tx, organizationId, c.invoice_id) : null;
    const decision = nextCaseStep({ state: c.state, paakravSentOn: c.paakrav_sent_on, lastReminder }, await businessToday(tx, organizationId));
    const rule = caseStepRule(decision)!;
    switch (decision.kind) {
      case 'done':
        await scheduleCase(tx, organizationId, caseId, null);
        return { kind: 'done', state: c.state };
      case 'record_paakrav':
        await commitPaakrav(tx, organizationId, caseId, decision.sentOn);
        return { kind: 'paakrav_recorded', sentOn: decision.sentOn, rule };
      case 'wait':
        await scheduleCase(tx, organizationId, caseId, decision.date);
        return { ...decision, rule };
      case 'send_paakrav':
      case 'hand_over':
        return { ...decision, rule };
    }
  });
  // Counted once committed (the case's own påkrav and its hand-over count where they are recorded, below).
  if (step.kind === 'paakrav_recorded') recordCaseStep('paakrav');
  return step;
}

/** The invoice's last numbered reminder (case-policy.ts decides whether it was the påkrav). */
async function lastNumberedReminder(sql: Queryable, organizationId: string, invoiceId: string): Promise<LastReminder | null> {
  const [last] = await sql<{ demand_letter: boolean; status: LastReminder['status']; sent_on: string }[]>`
    SELECT demand_letter, status, sent_on::text AS sent_on FROM reminders
    WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId} AND type = 'reminder'
    ORDER BY sent_on DESC, id DESC LIMIT 1`;
  return last ? { demandLetter: last.demand_letter, status: last.status, sentOn: last.sent_on } : null;
}

async function commitPaakrav(tx: Queryable, organizationId: string, caseId: string, sentOn: string): Promise<void> {
  const dates = paakravDates(sentOn);
  await transitionCase(tx, organizationId, caseId, 'sendPaakrav', {
    set: tx`paakrav_sent_on = ${sentOn}::date, paakrav_frist = ${dates.deadline}::date`,
    refused: () => new Error(`case ${caseId} is not in OPRETTET`),
  });
  await scheduleCase(tx, organizationId, caseId, dates.handOverOn);
}

/**
 * The case's own påkrav went out (dated `sentOn`): PAAKRAV_SENDT with its deadline, and the wake row at the hand-over
 * day. A case that moved meanwhile (paid, withdrawn) is left as it is: `recorded: false`.
 */
export async function recordCasePaakrav(db: Db, organizationId: string, caseId: string, sentOn: string): Promise<{ recorded: boolean }> {
  const out = await db.tx(async (tx) => {
    const c = await lockCase(tx, organizationId, caseId);
    if (!c || !CASE_LIFECYCLE.can(c.state, 'sendPaakrav')) return { recorded: false };
    await commitPaakrav(tx, organizationId, caseId, sentOn);
    return { recorded: true };
  });
  if (out.recorded) recordCaseStep('paakrav');
  return out;
}

/**
 * The partner took the case: OVERDRAGET with `handed_over_at`, and nothing more is timed. A case that moved
 * meanwhile is left as it is (`recorded: false`).
 */
export async function recordCaseHandOver(db: Db, organizationId: string, caseId: string): Promise<{ recorded: boolean }> {
  const out = await db.tx(async (tx) => {
    const c = await lockCase(tx, organizationId, caseId);
    if (!c || !CASE_LIFECYCLE.can(c.state, 'handOver')) return { recorded: false };
    await transitionCase(tx, organizationId, caseId, 'handOver', {
      set: tx`handed_over_at = now()`,
      refused: () => new Error(`case ${caseId} is not in PAAKRAV_SENDT`),
    });
    await scheduleCase(tx, organizationId, caseId, null);
    return { recorded: true };
  });
  if (out.recorded) recordCaseStep('hand_over');
  return out;
}

/** Whether the case is still waiting for its hand-over (read before the partner is called). */
export async function awaitsHandOver(sql: Queryable, organizationId: string, caseId: string): Promise<boolean> {
  const [row] = await sql<{ state: CaseState }[]>`SELECT state FROM collection_cases WHERE organization_id = ${organizationId} AND id = ${caseId}`;
  return row !== undefined && CASE_LIFECYCLE.can(row.state, 'handOver');
}

/**
 * A payment on an invoice in collections, in the payment's transaction with the invoice's row locked: the open case
 * of the invoice gets `sag.betaling_modtaget` (the case's state, and the amount), and when the payment settles the
 * invoice the case → AFSLUTTET (`sag.afsluttet`, `sag.status_aendret` when its status changes) and nothing more is
 * timed. The case row is locked after the invoice's (the order every payment takes). No open case: nothing.
 */
export async function recordCasePayment(sql: Queryable, organizationId: string, invoiceId: string, amountOere: number, settles: boolean): Promise<void> {
  const [open] = await sql<{ id: string }[]>`
    SELECT id FROM collection_cases
    WHERE organization_id = ${organizationId} AND invoice_id = ${invoiceId} AND state IN ${sql(OPEN_CASE_STATES as unknown as string[])}`;
  if (!open) return;
  const c = await lockCase(sql, organizationId, open.id);
  if (!c || isCaseClosed(c.state)) return;
  await recordEvent(sql, { organizationId, type: 'sag.betaling_modtaget', entityId: c.id, data: { ...caseEventData(c), amountOere } });
  if (!settles) return;
  await transitionCase(sql, organizationId, c.id, 'settle', {
    set: sql`closed_at = now()`,
    refused: () => new Error(`case ${c.id} is not open`),
  });
  await scheduleCase(sql, organizationId, c.id, null);
}

/**
 * The operator's withdraw-case: TILBAGEKALDT before AFSLUTTET, and nothing more is timed. Answers what it found:
 * no such case of the organisation, a case closed already (its state), or the case withdrawn (the state it left).
 */
export async function withdrawCase(
  db: Db,
  organizationId: string,
  caseId: string,
): Promise<{ outcome: 'not_found' } | { outcome: 'closed'; state: CaseState } | { outcome: 'withdrawn'; caseNumber: number; from: CaseState; eventVersion: number }> {
  if (!isUuid(organizationId) || !isUuid(caseId)) return { outcome: 'not_found' };
  return db.tx(async (tx) => {
    const c = await lockCase(tx, organizationId, caseId);
    if (!c) return { outcome: 'not_found' as const };
    if (isCaseClosed(c.state)) return { outcome: 'closed' as const, state: c.state };
    const moved = await transitionCase(tx, organizationId, caseId, 'withdraw', {
      set: tx`closed_at = now()`,
      refused: () => new Error(`case ${caseId} is not open`),
    });
    await scheduleCase(tx, organizationId, caseId, null);
    return { outcome: 'withdrawn' as const, caseNumber: c.case_number, from: c.state, eventVersion: moved.eventVersion };
  });
}

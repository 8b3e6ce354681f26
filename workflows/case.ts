import * as restate from '@restatedev/restate-sdk';
import { WORK, WORKFLOW_SERVICES, parseCaseKey, type WorkTarget } from '../contracts/workflows.ts';
import type { CaseStep } from '../services/cases/take-due-case-step.ts';
import { dispatchDocument } from './shared/dispatch.ts';
import { RETENTION, step } from './shared/durable.ts';
import { runStepLoop, type LoopResult } from './shared/step-loop.ts';
import { releasing, type WakeClaimActivities } from './shared/wake-claim.ts';

/**
 * The lifecycle of one collection case, as a virtual object keyed by `<organisation>:<case>`
 * (docs/collections.md, "The case lifecycle"): its exclusive handler is the case's lease. Like the
 * Dunning object it holds no timer and no state: the case's wake-index row is its schedule (moved by each step), and
 * PostgreSQL holds what was done. The decisions are in services/cases/take-due-case-step.ts; this loop only runs the
 * steps, so the journal shows each of them:
 *
 * - the påkrav: taken over from the invoice's demand letter, or sent by the case itself (render, deliver, record);
 * - the hand-over on the påkrav date + 11 days: the partner is called in one journaled step (its document's
 *   handOverId is stable, so a retry after a crash is the same hand-over), then OVERDRAGET is recorded.
 *
 * A step whose retries run out parks the case's wake-index row (the operator's retry-work puts it back in line).
 */
export const CASE = WORKFLOW_SERVICES.Case;

export type CasePaakravOutcome = { kind: 'sent'; channel: string; reference: string } | { kind: 'refused'; code: string; reason: string };

export interface CaseActivities extends WakeClaimActivities {
  takeCaseStep(organizationId: string, caseId: string): Promise<CaseStep>;
  renderCasePaakrav(organizationId: string, caseId: string, sentOn: string): Promise<{ sha256: string }>;
  deliverCasePaakrav(organizationId: string, caseId: string, documentSha256: string): Promise<CasePaakravOutcome>;
  recordDelivery(kind: 'paakrav', paakrav: { organizationId: string; caseId: string; sentOn: string }, attempt: CasePaakravOutcome): Promise<{ recorded: boolean }>;
  /** Hands the case to the collection partner (the document is built and sent inside, never journaled); null reference: the case no longer waits for it. */
  handOverCase(organizationId: string, caseId: string, handedOverOn: string): Promise<{ reference: string | null }>;
  recordCaseHandOver(organizationId: string, caseId: string): Promise<{ recorded: boolean }>;
  parkWork(target: WorkTarget, error: string): Promise<boolean>;
}

/** Steps one wake takes at most (a case has three transitions; one more to find the next wait). */
const STEPS_PER_WAKE = 4;

export type CaseResult = LoopResult;

export function createCase(activities: CaseActivities) {
  return restate.object({
    name: CASE,
    options: RETENTION,
    handlers: {
      wake: releasing('Case', activities, async (ctx: restate.ObjectContext): Promise<CaseResult> => {
        const { organizationId, caseId } = parseCaseKey(ctx.key);
        return runStepLoop(ctx, activities, {
          service: 'Case',
          work: WORK.collectionCase(organizationId, caseId),
          maxSteps: STEPS_PER_WAKE,
          take: () => activities.takeCaseStep(organizationId, caseId),
          run: async (s, i) => {
            if (s.kind === 'done' || s.kind === 'wait' || s.kind === 'paakrav_recorded') return null;
            if (s.kind === 'send_paakrav') {
              const sent = await dispatchDocument(ctx, {
                name: (verb) => `${verb}-paakrav-${i}`,
                render: () => activities.renderCasePaakrav(organizationId, caseId, s.sentOn),
                deliver: (rendered) => activities.deliverCasePaakrav(organizationId, caseId, rendered!.sha256),
                // Nobody to send it to, or refused for good: the case cannot go on without an operator.
                refused: (d) => (d.kind === 'refused' ? `påkrav not delivered: ${d.code}: ${d.reason}` : null),
                record: (attempt) => activities.recordDelivery('paakrav', { organizationId, caseId, sentOn: s.sentOn }, attempt),
              });
              return sent.ok ? null : sent.failed;
            }
            // The hand-over day.
            const handed = await step(ctx, `hand-over-${i}`, () => activities.handOverCase(organizationId, caseId, s.handedOverOn), 'mail');
            if (!handed.ok) return handed.failed;
            if (handed.value.reference === null) return null;
            const recorded = await step(ctx, `record-hand-over-${i}`, () => activities.recordCaseHandOver(organizationId, caseId), 'database');
            return recorded.ok ? null : recorded.failed;
          },
        });
      }),
    },
  });
}

export type Case = ReturnType<typeof createCase>;

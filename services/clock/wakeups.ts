import { WORKFLOW_SERVICES } from '../../contracts/workflows.ts';
import { createEngineClient } from '../shared/engine-client.ts';

/**
 * Wakes pending timed steps (webhook retries, lost hand-offs; reminders and subscription periods later) whose
 * business time has come. The pending steps are listed in the wake index (services/clock/wake-index.ts); the
 * organisation's BusinessClock object reads it and pokes each step, which then decides on business time read
 * through its own journal whether it is really due.
 */
export interface Wakeups {
  /** Asks the engine to wake every step of the organisation that is due by its business clock. */
  wakeDue(organizationId: string): Promise<void>;
}

/** The Restate virtual object (keyed by organisation) that fans the wake-ups out. */
export const BUSINESS_CLOCK = WORKFLOW_SERVICES.BusinessClock;

/**
 * A one-way call to the organisation's BusinessClock object through Restate's ingress. A lost call only delays: the
 * housekeeping loop wakes every organisation with overdue rows once a minute.
 */
export function createRestateWakeups(ingressUrl: string): Wakeups {
  const engine = createEngineClient(ingressUrl);
  return { wakeDue: (organizationId) => engine.send({ service: 'BusinessClock', handler: 'wakeDue', key: organizationId }) };
}

/**
 * The post-commit step of a mutation that made timed steps due (a test clock advance, a webhook ping, replay or
 * reactivation): wakes them now. Without an engine (tests of the API alone) it only says so; the housekeeping loop
 * would find them.
 */
export const wakeDueAfterCommit =
  (wakeups: Wakeups | undefined, organizationId: string, log: { warn(msg: string): void }) => async (): Promise<void> => {
    if (!wakeups) {
      log.warn('no workflow engine configured: what this change made due waits for the housekeeping loop');
      return;
    }
    await wakeups.wakeDue(organizationId);
  };

import { sendToRestate } from '../shared/restate-ingress.ts';

/**
 * Wakes pending timed steps (webhook retries now; reminders and subscription periods later) whose business time has
 * come. The pending steps are listed in the wake_index table; the engine reads it and pokes each step, which then
 * decides on business time read through its own journal whether it is really due.
 */
export interface Wakeups {
  /** Asks the engine to wake every step of the organisation that is due by its business clock. */
  wakeDue(organizationId: string): Promise<void>;
}

/** The Restate virtual object (keyed by organisation) that fans the wake-ups out. */
export const BUSINESS_CLOCK = 'BusinessClock';

/**
 * A one-way call to the organisation's BusinessClock object through Restate's ingress. A lost call only delays: the
 * workflows process sweeps the wake index for overdue rows every minute.
 */
export function createRestateWakeups(ingressUrl: string): Wakeups {
  return {
    wakeDue: (organizationId) => sendToRestate(ingressUrl, `${BUSINESS_CLOCK}/${encodeURIComponent(organizationId)}/wakeDue`, 'wake-up'),
  };
}

/**
 * The post-commit step of a mutation that made timed steps due (a test clock advance, a webhook ping, replay or
 * reactivation): wakes them now. Without an engine (tests of the API alone) it only says so; the workflows
 * process's overdue sweep would find them.
 */
export const wakeDueAfterCommit =
  (wakeups: Wakeups | undefined, organizationId: string, log: { warn(msg: string): void }) => async (): Promise<void> => {
    if (!wakeups) {
      log.warn('no workflow engine configured: what this change made due waits for the overdue sweep');
      return;
    }
    await wakeups.wakeDue(organizationId);
  };

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

import { WORKFLOW_SERVICES } from '../../contracts/workflows.ts';
import { createEngineClient } from '../shared/engine-client.ts';

/**
 * Wakes pending durable work whose business time has come: webhook retries, reminder steps, collection case steps,
 * subscription periods, and hand-offs after commit that were lost. The pending work is listed in the wake index
 * (services/clock/wake-index.ts; docs/architecture.md, "Time-driven work"); the organisation's BusinessClock object
 * reads it and pokes each row's handler, which then decides on business time read through its own journal whether
 * it is really due.
 */
export interface Wakeups {
  /** Asks the engine to wake every step of the organisation that is due by its business clock. */
  wakeDue(organizationId: string): Promise<void>;
}

/** The Restate virtual object (keyed by organisation) that fans the wake-ups out. */
export const BUSINESS_CLOCK = WORKFLOW_SERVICES.BusinessClock;

/**
 * A one-way call to the organisation's BusinessClock object through Restate's ingress. A lost call only delays: the
 * housekeeping loop's `due-work` job wakes every organisation with overdue rows once a minute.
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

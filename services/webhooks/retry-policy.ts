/**
 * The webhook delivery's retry policy (docs/api-conventions.md, "Events, webhooks and the test clock", Delivery): a
 * failed attempt waits its turn in this schedule, in the organisation's business time, and the eighth failure gives
 * up. The delivery store records each attempt by it; pure, no I/O.
 */
import { afterAttempt as statusAfterAttempt, type WebhookDeliveryStatus } from './webhook-delivery-lifecycle.ts';

/** Waits after failed attempts 1..7: the eighth failure gives up. */
export const RETRY_SCHEDULE_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000] as const;
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1;

/**
 * Where attempt `number` (1-based) of a round leaves its delivery: delivered on success, failed with the wait before
 * the next attempt, or given up once the schedule is spent.
 */
export function afterAttempt(number: number, succeeded: boolean): { status: WebhookDeliveryStatus; waitMs: number | null } {
  const waitMs = succeeded ? null : number <= RETRY_SCHEDULE_MS.length ? RETRY_SCHEDULE_MS[number - 1]! : null;
  return { status: statusAfterAttempt(succeeded, waitMs !== null), waitMs };
}

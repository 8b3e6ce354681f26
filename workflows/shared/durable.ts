import * as restate from '@restatedev/restate-sdk';
import type { WorkflowHandler, WorkflowInputs, WorkflowService } from '../../contracts/workflows.ts';

/**
 * What every durable handler shares: the typed one-way call to another handler, the armed-timer pattern and named
 * retry policies with bounded attempts (the activity boundary that turns business refusals into terminal errors is
 * beside it, activity-boundary.ts). Written once, so every durable object (the housekeeping loop, the mails and
 * receipts, dunning, cases, subscription schedules, webhook deliveries) sequences its steps the same way.
 */

// ---------------------------------------------------------------------------------------------------------------
// Typed calls between handlers (names and inputs from contracts/workflows.ts)

/** The part of a handler's context these helpers use, whatever the object's state type. */
type Ctx = Pick<restate.Context, 'genericSend'>;
type ObjectCtx = Pick<restate.ObjectContext, 'genericSend' | 'request' | 'invocation' | 'key'>;

/** A durable one-way call from inside a handler; `delayMs` makes it a timer. Returns the invocation's handle. */
export function sendTo<S extends WorkflowService, H extends WorkflowHandler<S>>(
  ctx: Ctx,
  call: { service: S; handler: H; key?: string; input: WorkflowInputs[S][H] },
  delayMs?: number,
): restate.InvocationHandle {
  return ctx.genericSend({
    service: call.service,
    method: call.handler,
    parameter: call.input,
    inputSerde: restate.serde.json as restate.Serde<WorkflowInputs[S][H]>,
    ...(call.key !== undefined ? { key: call.key } : {}),
    ...(delayMs !== undefined ? { delay: delayMs } : {}),
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The armed timer

/**
 * An object that wakes itself later keeps at most one armed timer. Each timer carries the generation it was armed
 * with; a wake whose generation is not the current one was superseded and does nothing. Arming again (or a poke
 * that acts now) cancels the armed timer, so the timer table holds no wake-ups that would only be ignored.
 * Exclusive handlers of one key never overlap, so this state needs no other lock.
 */
export interface ArmedTimer {
  /** Invocation id of the armed timer; null while none is armed. */
  pendingWake: string | null;
}

/** A wake that carries a generation other than the current one is stale. A poke carries none and is never stale. */
export const isStaleWake = (current: number | undefined, carried: number | undefined): boolean => carried !== undefined && carried !== current;

/** Cancels the armed timer, unless it is the invocation running now (the timer firing). */
export function disarm(ctx: ObjectCtx, s: ArmedTimer): void {
  if (s.pendingWake !== null && s.pendingWake !== ctx.request().id) {
    ctx.invocation(restate.InvocationIdParser.fromString(s.pendingWake)).cancel();
  }
  s.pendingWake = null;
}

/** Arms exactly one delayed call to one of the object's own handlers; the caller has bumped the generation. */
export async function arm<S extends WorkflowService, H extends WorkflowHandler<S>>(
  ctx: ObjectCtx,
  s: ArmedTimer,
  call: { service: S; handler: H; input: WorkflowInputs[S][H] },
  delayMs: number,
): Promise<void> {
  disarm(ctx, s);
  s.pendingWake = await sendTo(ctx, { ...call, key: ctx.key }, Math.max(0, Math.ceil(delayMs))).invocationId;
}

// ---------------------------------------------------------------------------------------------------------------
// Retry policies

/**
 * Every step runs under one of these, and every one is bounded: a step that exhausts its attempts fails with a
 * terminal error, which its handler records (a parked wake-index row, a failed send, a housekeeping error) instead
 * of retrying forever and holding its object's key.
 */
export const RETRY = {
  /** Steps that touch only PostgreSQL (and a webhook receiver with its own timeout): about a minute. */
  database: { maxRetryAttempts: 8, maxRetryInterval: { seconds: 10 } },
  /** Housekeeping jobs: about half a minute, then the job's error is recorded and it runs again later. */
  job: { maxRetryAttempts: 10, maxRetryInterval: { seconds: 10 } },
  /** The mail server: backing off from 5 s to 10 min, about 40 minutes in all. */
  mail: { initialRetryInterval: { seconds: 5 }, retryIntervalFactor: 2, maxRetryInterval: { minutes: 10 }, maxRetryAttempts: 10 },
  /** Rendering and storing a document (Chromium and PostgreSQL): from 2 s to 10 min, about an hour in all. */
  render: { initialRetryInterval: { seconds: 2 }, retryIntervalFactor: 2, maxRetryInterval: { minutes: 10 }, maxRetryAttempts: 14 },
  /** Finishing an interrupted issue: from 5 s to 10 min, about an hour in all. */
  finishIssue: { initialRetryInterval: { seconds: 5 }, retryIntervalFactor: 2, maxRetryInterval: { minutes: 10 }, maxRetryAttempts: 13 },
} as const satisfies Record<string, restate.RunOptions<unknown>>;

export type RetryPolicyName = keyof typeof RETRY;

/**
 * Runs one journaled step under a named policy. On exhaustion (or a terminal error from the activity) it returns
 * `{ failed }` instead of throwing, so the handler records the failure as a step of its own.
 */
export async function step<T>(
  ctx: Pick<restate.Context, 'run'>,
  name: string,
  action: () => Promise<T>,
  policy: RetryPolicyName,
): Promise<{ ok: true; value: T } | { ok: false; failed: string }> {
  try {
    return { ok: true, value: await ctx.run(name, action, RETRY[policy]) };
  } catch (err) {
    if (!(err instanceof restate.TerminalError)) throw err;
    return { ok: false, failed: err.message };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Retention

/**
 * How long Restate keeps what a finished invocation did, for every durable service: its journal (each step's stored
 * result, what the Restate UI and `sys_journal` show; docs/operator-guide.md) and the idempotency key it was sent with.
 * 35 days hold a whole dunning cycle (reminders 10 days apart, the påkrav's 10-day deadline, the hand-over the day
 * after), so an operator asked why a reminder or hand-over happened can still read each step that led to it. The
 * idempotency retention is set too because it caps the journal's for an invocation sent with a key, which every wake
 * is (`wake:<service>:<key>:<claim>`, the claim from a sequence that never repeats). The server's own default is the
 * same (`default-journal-retention`, deploy/local/restate-server.ts), for anything registered without these.
 */
export const RETENTION_DAYS = 35;
export const RETENTION = {
  journalRetention: { days: RETENTION_DAYS },
  idempotencyRetention: { days: RETENTION_DAYS },
} as const satisfies restate.ServiceOptions;

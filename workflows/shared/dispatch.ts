import type * as restate from '@restatedev/restate-sdk';
import type { WorkTarget } from '../../contracts/workflows.ts';
import { RETRY, step } from './durable.ts';

/**
 * The durable segment every outbound document goes through, written once for the invoice mail, the reminder, the
 * case's påkrav, the receipt and the portal sign-in mail: `render` stores the document, `deliver` hands it to its
 * channel (and writes nothing), then `record` writes what the delivery did from its journaled result, or, when the
 * delivery's retries ran out, `give-up` records it as undeliverable. Delivering and recording are separate steps: once
 * the channel has taken the document, that fact is in the journal, and a failure while recording retries the
 * recording only, never the delivery.
 *
 * The segment answers what the render and the record steps answered, or the error of the step whose retries ran out:
 * the caller then parks its work (`parkWork`), so that nobody delivers it again before an operator has looked.
 */
export type Dispatched<D, R> = { ok: true; rendered?: D; recorded?: R } | { ok: false; failed: string };

export type DispatchVerb = 'render' | 'deliver' | 'record' | 'give-up';

export interface DispatchSteps<D, A, R> {
  /** The journal's name of each step (e.g. `deliver-3`); the names are part of running journals, so they stay put. */
  name: (verb: DispatchVerb) => string;
  /** Renders and stores the document; absent when it is stored already. */
  render?: () => Promise<D>;
  /** Hands the document to its channel; absent when its delivery is settled already. */
  deliver?: (rendered: D | undefined) => Promise<A>;
  /** A delivered attempt that must not be recorded (nobody to send it to): its reason, and the work is parked. */
  refused?: (attempt: A) => string | null;
  record?: (attempt: A) => Promise<R>;
  /** Records a delivery whose retries ran out; without it, such a delivery parks the work. */
  giveUp?: (error: string) => Promise<R>;
}

export async function dispatchDocument<D, A, R>(ctx: Pick<restate.Context, 'run'>, s: DispatchSteps<D, A, R>): Promise<Dispatched<D, R>> {
  let rendered: D | undefined;
  if (s.render) {
    const done = await step(ctx, s.name('render'), s.render, 'render');
    if (!done.ok) return done;
    rendered = done.value;
  }
  const { deliver, record, giveUp } = s;
  if (!deliver) return { ok: true, rendered };
  const attempt = await step(ctx, s.name('deliver'), () => deliver(rendered), 'mail');
  const refusal = attempt.ok ? s.refused?.(attempt.value) : null;
  if (refusal) return { ok: false, failed: refusal };
  const recorded = attempt.ok
    ? record && (await step(ctx, s.name('record'), () => record(attempt.value), 'database'))
    : giveUp && (await step(ctx, s.name('give-up'), () => giveUp(attempt.failed), 'database'));
  if (recorded === undefined) return attempt.ok ? { ok: true, rendered } : attempt;
  return recorded.ok ? { ok: true, rendered, recorded: recorded.value } : recorded;
}

/** Parks the work's wake-index row with the error of the step whose retries ran out (the operator's retry-work puts it back in line). */
export async function parkWork(
  ctx: Pick<restate.Context, 'run'>,
  activities: { parkWork(target: WorkTarget, error: string): Promise<boolean> },
  target: WorkTarget,
  error: string,
): Promise<void> {
  await ctx.run('park', () => activities.parkWork(target, error), RETRY.database);
}

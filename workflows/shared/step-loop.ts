import type * as restate from '@restatedev/restate-sdk';
import type { WorkTarget } from '../../contracts/workflows.ts';
import { parkWork } from './dispatch.ts';
import { step } from './durable.ts';

/**
 * The loop of an object that holds no timer and no state (Dunning, Case): one wake takes the step the database says
 * is due (`take-step-i`), runs what it asks for, and takes the next, until a step says `done` or `wait`, at most
 * `maxSteps` per invocation (the rest in a fresh invocation, handed on by the release, for a short journal). A step whose retries run
 * out parks the work's wake-index row (the operator's retry-work puts it back in line).
 */
export type LoopResult = { steps: number; ended: 'done' | 'wait' | 'parked' | 'continued'; next?: string };

type Taken = { kind: 'done' } | { kind: 'wait'; date: string } | { kind: string };

export interface StepLoop<S extends Taken> {
  service: 'Dunning' | 'Case';
  /** The object's own work (its wake-index row), parked on exhaustion. */
  work: WorkTarget;
  maxSteps: number;
  take(): Promise<S>;
  /** Runs what step `i` asks for; answers the error to park with, or null to go on. */
  run(s: S, i: number): Promise<string | null>;
}

export async function runStepLoop<S extends Taken>(
  ctx: restate.ObjectContext,
  activities: { parkWork(target: WorkTarget, error: string): Promise<boolean> },
  loop: StepLoop<S>,
): Promise<LoopResult> {
  const park = async (error: string): Promise<LoopResult> => {
    await parkWork(ctx, activities, loop.work, error);
    return { steps: 0, ended: 'parked' };
  };
  for (let i = 0; i < loop.maxSteps; i++) {
    const taken = await step(ctx, `take-step-${i}`, () => loop.take(), 'database');
    if (!taken.ok) return park(taken.failed);
    const s = taken.value;
    if (s.kind === 'done') return { steps: i, ended: 'done' };
    if (s.kind === 'wait') return { steps: i, ended: 'wait', next: (s as { date: string }).date };
    const failed = await loop.run(s, i);
    if (failed !== null) return park(failed);
  }
  // Many steps at once (a long clock advance): the row is still due, so the handler's release hands it on to a fresh
  // invocation (workflows/shared/wake-claim.ts), after this one's journal.
  return { steps: loop.maxSteps, ended: 'continued' };
}

import { recordTimeline } from '../invoices/record-timeline.ts';
import { timeBarredOn } from '../law/danish-law.ts';
import type { Queryable } from '../shared/db.ts';
import { stepInstant, type DunningContext } from './dunning-context.ts';
import type { LimitationWarning } from './reminder-policy.ts';

/** Writes the limitation warning `daysBefore` days before the claim is time-barred (timeline only). */
export async function noteLimitationWarning(sql: Queryable, ctx: DunningContext, daysBefore: LimitationWarning, on: string): Promise<void> {
  await recordTimeline(
    sql,
    ctx.organizationId,
    ctx.invoice.id,
    'limitation_warning',
    { daysBefore, timeBarredOn: timeBarredOn(ctx.facts.dueDate) },
    stepInstant(ctx, on),
  );
}

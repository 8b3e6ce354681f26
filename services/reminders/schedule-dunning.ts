import { WORK } from '../../contracts/workflows.ts';
import { clearWake, scheduleWake } from '../clock/wake-index.ts';
import type { Queryable } from '../shared/db.ts';

/** Lists the invoice's lifecycle as due at the start of `date` (business time), or ends it. */
export async function scheduleDunning(sql: Queryable, organizationId: string, invoiceId: string, date: string | null): Promise<void> {
  const target = WORK.dunning(organizationId, invoiceId);
  if (date === null) {
    await clearWake(sql, target);
    return;
  }
  const [start] = await sql<{ at: Date }[]>`SELECT (${date}::date)::timestamp AT TIME ZONE 'Europe/Copenhagen' AS at`;
  await scheduleWake(sql, organizationId, target, start!.at);
}

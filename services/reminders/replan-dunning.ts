import type { Wakeups } from '../clock/wakeups.ts';
import type { Db } from '../shared/db.ts';
import { wakeRows } from '../clock/wake-index.ts';

/**
 * After the reminder settings changed: every open invoice of the organisation that follows them re-plans its next
 * step now (its wake-index row becomes due and the organisation's BusinessClock pokes it), so the new settings apply
 * to every step not yet taken. This reads the organisation's dunning rows once; it runs on a settings change, not on
 * a schedule.
 */
export async function replanDunning(db: Db, wakeups: Wakeups | undefined, organizationId: string): Promise<void> {
  await db.read((sql) => wakeRows.dueNow(sql, organizationId, 'Dunning'));
  await wakeups?.wakeDue(organizationId);
}

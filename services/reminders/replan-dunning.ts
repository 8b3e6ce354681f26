import type { Wakeups } from '../clock/wakeups.ts';
import type { Db } from '../shared/db.ts';

/**
 * After the reminder settings changed: every open invoice of the organisation that follows them re-plans its next
 * step now (its wake-index row becomes due and the organisation's BusinessClock pokes it), so the new settings apply
 * to every step not yet taken. This reads the organisation's dunning rows once; it runs on a settings change, not on
 * a schedule.
 */
export async function replanDunning(db: Db, wakeups: Wakeups | undefined, organizationId: string): Promise<void> {
  await db.read((sql) => sql`
    UPDATE wake_index SET due_at = now()
    WHERE organization_id = ${organizationId} AND service = 'Dunning' AND parked_at IS NULL AND due_at > now()`);
  await wakeups?.wakeDue(organizationId);
}

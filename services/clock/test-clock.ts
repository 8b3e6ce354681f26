import type { TestClock, TestClockAdvance } from '../../contracts/test-clock.ts';
import { addCopenhagenDays, copenhagenToday } from '../shared/clock.ts';
import type { Tx } from '../shared/db.ts';
import { DomainError } from '../shared/errors.ts';

const CLOCK_LIMIT = '9999-12-01T00:00:00.000Z';
const CLOCK_LIMIT_MS = Date.parse(CLOCK_LIMIT);

/** The clock as the API shows it. */
export const clockView = (mode: 'live' | 'test', at: Date): TestClock => ({ mode, now: at.toISOString(), today: copenhagenToday(at) });

/**
 * `POST /v1/test-clock/advance`: moves a sandbox organisation's clock forward, to an instant or by whole days, in
 * the caller's transaction; never back. The row is locked, so concurrent advances apply one after the other. What
 * has come due is woken after commit (advance-sandbox-clock.ts).
 */
export async function advanceTestClock(tx: Tx, organizationId: string, body: TestClockAdvance, realNow: () => number = Date.now): Promise<TestClock> {
  await tx`INSERT INTO test_clocks (organization_id) VALUES (${organizationId}) ON CONFLICT DO NOTHING`;
  const [row] = await tx<{ offset_ms: number }[]>`
    SELECT offset_ms FROM test_clocks WHERE organization_id = ${organizationId} FOR UPDATE`;
  const real = realNow();
  const current = real + row!.offset_ms;
  const target = body.to !== undefined ? Date.parse(body.to) : addCopenhagenDays(current, body.days!);
  if (target < current) {
    throw new DomainError('test_clock_backwards', `The test clock only moves forward; it is at ${new Date(current).toISOString()}.`, {
      details: [{ path: '/to', message: `must not be earlier than ${new Date(current).toISOString()}` }],
    });
  }
  // Real time keeps running after the advance, and every date the service writes has four digits: a month of margin
  // keeps the organisation's today (in Copenhagen) within 9999-12-31 for a month of real time.
  if (!Number.isSafeInteger(target - real) || target >= CLOCK_LIMIT_MS) {
    throw new DomainError('validation_failed', `The test clock cannot move past ${CLOCK_LIMIT}.`, {
      details: [{ path: body.to !== undefined ? '/to' : '/days', message: `must stay before ${CLOCK_LIMIT}` }],
    });
  }
  await tx`UPDATE test_clocks SET offset_ms = ${target - real}, updated_at = now() WHERE organization_id = ${organizationId}`;
  return clockView('test', new Date(target));
}

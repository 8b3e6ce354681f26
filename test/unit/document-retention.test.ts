import assert from 'node:assert/strict';
import { lockUntil, retainUntil } from '../../services/documents/retention.ts';

/** Bogføringsloven § 12: kept until five years after the end of the financial year (the calendar year). */
describe('document retention', () => {
  const table: [documentDate: string, lastDay: string, lock: string][] = [
    ['2026-01-01', '2031-12-31', '2032-01-01T00:00:00.000Z'],
    ['2026-06-15', '2031-12-31', '2032-01-01T00:00:00.000Z'],
    ['2026-12-31', '2031-12-31', '2032-01-01T00:00:00.000Z'],
    ['2027-01-01', '2032-12-31', '2033-01-01T00:00:00.000Z'],
    ['2028-02-29', '2033-12-31', '2034-01-01T00:00:00.000Z'],
  ];
  for (const [documentDate, lastDay, lock] of table) {
    it(`a document of ${documentDate} is kept through ${lastDay}, locked until ${lock}`, () => {
      assert.equal(retainUntil(documentDate), lastDay);
      assert.equal(lockUntil(lastDay).toISOString(), lock);
    });
  }

  it('the lock outlasts the last day in Copenhagen, summer or winter', () => {
    // 31 December ends at 23:00 UTC in Copenhagen (UTC+1); the lock runs an hour past it.
    assert.ok(lockUntil('2031-12-31').getTime() > Date.parse('2031-12-31T23:00:00Z'));
  });

  it('refuses what is not a date', () => {
    assert.throws(() => retainUntil('31-12-2026'), TypeError);
    assert.throws(() => retainUntil('2026-12-31T10:00:00Z'), TypeError);
  });
});

import assert from 'node:assert/strict';
import { addCopenhagenDays, copenhagenToday } from '../../services/shared/clock.ts';

/**
 * addCopenhagenDays: the test clock's `{days}` advance moves the organisation's today (the Copenhagen date) by
 * exactly that many days, keeping the wall-clock time, across both daylight-saving changes.
 */
describe('addCopenhagenDays', () => {
  const cases: [from: string, days: number, to: string, why: string][] = [
    ['2026-11-27T10:00:00.000Z', 1, '2026-11-28T10:00:00.000Z', 'winter, no change between: 24 hours'],
    ['2027-03-27T22:30:00.000Z', 1, '2027-03-28T21:30:00.000Z', '23:30 the evening before summer time: 23 hours'],
    ['2027-03-27T22:30:00.000Z', 10, '2027-04-06T21:30:00.000Z', 'ten days over the spring change'],
    ['2027-10-30T22:30:00.000Z', 1, '2027-10-31T23:30:00.000Z', '23:30 the evening before winter time: 25 hours'],
    ['2027-10-30T23:30:00.000Z', 1, '2027-11-01T00:30:00.000Z', '00:30 summer time before the autumn change: the next day 00:30 winter'],
    ['2027-03-27T01:30:00.000Z', 1, '2027-03-28T01:30:00.000Z', '02:30 the day before spring: the skipped hour reads 03:30 summer time'],
    ['2027-10-30T00:30:00.000Z', 1, '2027-10-31T00:30:00.000Z', '02:30 summer time before autumn: the first 02:30 of the repeated hour'],
    ['2027-01-31T12:00:00.123Z', 365, '2028-01-31T12:00:00.123Z', 'milliseconds kept, a year on'],
  ];
  for (const [from, days, to, why] of cases) {
    it(`${from} + ${days}: ${why}`, () => {
      const at = addCopenhagenDays(Date.parse(from), days);
      assert.equal(new Date(at).toISOString(), to);
    });
  }

  it('moves the Copenhagen date by exactly the days asked, from every hour of a year', () => {
    for (let at = Date.parse('2027-01-01T00:15:00Z'); at < Date.parse('2028-01-01T00:00:00Z'); at += 3_600_000) {
      for (const days of [1, 7, 30]) {
        const from = copenhagenToday(new Date(at));
        const expected = new Date(`${from}T00:00:00Z`);
        expected.setUTCDate(expected.getUTCDate() + days);
        assert.equal(copenhagenToday(new Date(addCopenhagenDays(at, days))), expected.toISOString().slice(0, 10), `${new Date(at).toISOString()} + ${days}`);
      }
    }
  });
});

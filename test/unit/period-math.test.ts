import assert from 'node:assert/strict';
import {
  addDays,
  addIntervals,
  countPeriodsDue,
  lastPeriod,
  nextPeriodOnOrAfter,
  period,
  periodComes,
  periodEnd,
  periodOf,
  periodsDue,
  periodStart,
  rebase,
  scheduleOf,
  type Interval,
} from '../../services/subscriptions/period-math.ts';

const monthly: Interval = { unit: 'month', count: 1 };
const yearly: Interval = { unit: 'year', count: 1 };
const weekly: Interval = { unit: 'week', count: 1 };

describe('subscription period math', () => {
  describe('period starts: counted from the start date, clamped to the month', () => {
    const table: [string, string, Interval, string[]][] = [
      ['monthly from 31 January (leap year)', '2028-01-31', monthly,
        ['2028-01-31', '2028-02-29', '2028-03-31', '2028-04-30', '2028-05-31', '2028-06-30', '2028-07-31', '2028-08-31', '2028-09-30', '2028-10-31', '2028-11-30', '2028-12-31', '2029-01-31', '2029-02-28']],
      ['monthly from 31 January (common year)', '2027-01-31', monthly, ['2027-01-31', '2027-02-28', '2027-03-31', '2027-04-30']],
      ['monthly from 30 January', '2027-01-30', monthly, ['2027-01-30', '2027-02-28', '2027-03-30', '2027-04-30']],
      ['monthly from 29 January (leap)', '2028-01-29', monthly, ['2028-01-29', '2028-02-29', '2028-03-29']],
      ['monthly from the 1st', '2026-11-01', monthly, ['2026-11-01', '2026-12-01', '2027-01-01', '2027-02-01']],
      ['every 3 months from 31 August', '2026-08-31', { unit: 'month', count: 3 }, ['2026-08-31', '2026-11-30', '2027-02-28', '2027-05-31', '2027-08-31']],
      ['every 24 months', '2026-05-15', { unit: 'month', count: 24 }, ['2026-05-15', '2028-05-15', '2030-05-15']],
      ['yearly from 29 February', '2028-02-29', yearly, ['2028-02-29', '2029-02-28', '2030-02-28', '2031-02-28', '2032-02-29', '2033-02-28']],
      ['every 2 years from 29 February', '2028-02-29', { unit: 'year', count: 2 }, ['2028-02-29', '2030-02-28', '2032-02-29']],
      ['yearly across 2100 (no leap day)', '2096-02-29', { unit: 'year', count: 4 }, ['2096-02-29', '2100-02-28', '2104-02-29']],
      ['weekly across a year end', '2026-12-24', weekly, ['2026-12-24', '2026-12-31', '2027-01-07', '2027-01-14']],
      ['every 2 weeks across a leap day', '2028-02-15', { unit: 'week', count: 2 }, ['2028-02-15', '2028-02-29', '2028-03-14']],
      ['every 24 weeks', '2026-01-01', { unit: 'week', count: 24 }, ['2026-01-01', '2026-06-18', '2026-12-03']],
    ];
    for (const [name, start, interval, starts] of table) {
      it(name, () => {
        const s = scheduleOf(start, interval, null);
        assert.deepEqual(starts.map((_, k) => periodStart(s, k)), starts);
        // Each period ends the day before the next starts, and every date maps back to its period.
        for (let k = 0; k < starts.length - 1; k++) {
          assert.equal(periodEnd(s, k), addDays(starts[k + 1]!, -1));
          assert.equal(periodOf(s, starts[k]!), k);
          assert.equal(periodOf(s, periodEnd(s, k)), k);
        }
      });
    }
  });

  it('ends periods on the day before the next start', () => {
    const s = scheduleOf('2028-01-31', monthly, null);
    assert.deepEqual(period(s, 0), { index: 0, start: '2028-01-31', end: '2028-02-28' });
    assert.deepEqual(period(s, 1), { index: 1, start: '2028-02-29', end: '2028-03-30' });
    assert.deepEqual(period(scheduleOf('2028-02-29', yearly, null), 1), { index: 1, start: '2029-02-28', end: '2030-02-27' });
    assert.deepEqual(period(scheduleOf('2026-03-02', weekly, null), 0), { index: 0, start: '2026-03-02', end: '2026-03-08' });
  });

  it('adds intervals from the given date, never from the previous result', () => {
    assert.equal(addIntervals('2027-01-31', monthly, 2), '2027-03-31');
    assert.equal(addIntervals(addIntervals('2027-01-31', monthly, 1), monthly, 1), '2027-03-28');
    assert.equal(addIntervals('2026-05-15', monthly, 0), '2026-05-15');
    assert.throws(() => addIntervals('2026-05-15', monthly, -1), RangeError);
  });

  describe('periodOf', () => {
    const s = scheduleOf('2027-01-31', monthly, null);
    const table: [string, number | null][] = [
      ['2027-01-30', null],
      ['2027-01-31', 0],
      ['2027-02-27', 0],
      ['2027-02-28', 1],
      ['2027-03-30', 1],
      ['2027-03-31', 2],
      ['2030-01-31', 36],
      ['2030-01-30', 35],
    ];
    for (const [date, k] of table) it(`${date} → ${k}`, () => assert.equal(periodOf(s, date), k));
    it('weekly: 7 × count days', () => {
      const w = scheduleOf('2026-01-05', { unit: 'week', count: 2 }, null);
      assert.equal(periodOf(w, '2026-01-18'), 0);
      assert.equal(periodOf(w, '2026-01-19'), 1);
      assert.equal(periodOf(w, '2036-01-05'), Math.floor(3652 / 14));
    });
  });

  describe('endDate: a period starting after it never comes', () => {
    const s = scheduleOf('2026-01-31', monthly, '2026-04-30');
    it('comes on and before endDate, not after', () => {
      assert.deepEqual([0, 1, 2, 3, 4].map((k) => periodComes(s, k)), [true, true, true, true, false]);
      assert.equal(lastPeriod(s), 3);
    });
    it('an endDate on a period start includes that period (billed whole)', () => {
      const e = scheduleOf('2026-01-01', monthly, '2026-03-01');
      assert.equal(lastPeriod(e), 2);
      assert.deepEqual(period(e, 2), { index: 2, start: '2026-03-01', end: '2026-03-31' });
    });
    it('endDate equal to startDate: exactly one period', () => assert.equal(lastPeriod(scheduleOf('2026-05-05', yearly, '2026-05-05')), 0));
    it('no endDate: no last period', () => assert.equal(lastPeriod(scheduleOf('2026-05-05', yearly, null)), null));
    it('nothing past 9999-12-31 comes', () => {
      const far = scheduleOf('9999-06-01', yearly, null);
      assert.equal(periodComes(far, 0), true);
      assert.equal(periodComes(far, 1), false);
      assert.equal(periodStart(far, 1), '10000-06-01');
      assert.equal(nextPeriodOnOrAfter(far, '9999-06-02'), null);
      assert.equal(periodOf(far, '9999-12-31'), 0);
    });
  });

  describe('nextPeriodOnOrAfter (resume)', () => {
    const s = scheduleOf('2026-01-31', monthly, '2026-12-31');
    const table: [string, number, number | null][] = [
      ['2026-01-01', 0, 0],
      ['2026-01-31', 0, 0],
      ['2026-02-01', 0, 1],
      ['2026-02-28', 0, 1],
      ['2026-03-01', 0, 2],
      ['2026-06-15', 0, 5],
      ['2026-07-01', 0, 6],
      ['2026-02-01', 4, 4],
      ['2026-12-31', 0, 11],
      ['2027-01-01', 0, null],
    ];
    for (const [date, fromK, k] of table) it(`${date} from ${fromK} → ${k}`, () => assert.equal(nextPeriodOnOrAfter(s, date, fromK), k));
  });

  describe('periodsDue and countPeriodsDue', () => {
    const table: [string, string, Interval, string | null, number, string, string[]][] = [
      ['monthly, three started', '2026-01-31', monthly, null, 0, '2026-03-31', ['2026-01-31', '2026-02-28', '2026-03-31']],
      ['from the next period on', '2026-01-31', monthly, null, 1, '2026-03-31', ['2026-02-28', '2026-03-31']],
      ['none yet', '2026-01-31', monthly, null, 0, '2026-01-30', []],
      ['none after the next period', '2026-01-31', monthly, null, 3, '2026-03-31', []],
      ['cut at endDate', '2026-01-31', monthly, '2026-02-28', 0, '2026-12-31', ['2026-01-31', '2026-02-28']],
      ['weekly', '2026-03-02', weekly, null, 0, '2026-03-20', ['2026-03-02', '2026-03-09', '2026-03-16']],
      ['yearly from 29 February', '2028-02-29', yearly, null, 0, '2030-03-01', ['2028-02-29', '2029-02-28', '2030-02-28']],
    ];
    for (const [name, start, interval, end, fromK, today, starts] of table) {
      it(name, () => {
        const s = scheduleOf(start, interval, end);
        assert.deepEqual(periodsDue(s, fromK, today).map((p) => p.start), starts);
        assert.equal(countPeriodsDue(s, fromK, today), starts.length);
      });
    }
    it('takes at most limit periods, oldest first', () => {
      const s = scheduleOf('2020-01-06', weekly, null);
      assert.deepEqual(periodsDue(s, 0, '2026-01-01', 2).map((p) => p.start), ['2020-01-06', '2020-01-13']);
      assert.equal(countPeriodsDue(s, 0, '2026-01-01'), periodsDue(s, 0, '2026-01-01').length);
    });
  });

  describe('rebase: a new interval from the next period on', () => {
    it('keeps the next period\'s start and counts the new interval from it', () => {
      const s = scheduleOf('2026-01-31', monthly, null);
      const r = rebase(s, 3, { unit: 'week', count: 2 });
      assert.deepEqual(r, { anchorDate: '2026-04-30', anchorPeriod: 3, interval: { unit: 'week', count: 2 }, endDate: null });
      assert.deepEqual([3, 4, 5].map((k) => periodStart(r, k)), ['2026-04-30', '2026-05-14', '2026-05-28']);
      assert.equal(periodOf(r, '2026-05-13'), 3);
      assert.equal(periodOf(r, '2026-04-29'), null);
      assert.throws(() => periodStart(r, 2), RangeError);
    });
    it('months after a rebase clamp from the new anchor, not from the original start', () => {
      const s = scheduleOf('2026-01-31', monthly, null);
      // Period 1 starts 28 February; quarterly from there gives the 28th, not the 31st.
      const r = rebase(s, 1, { unit: 'month', count: 3 });
      assert.deepEqual([1, 2, 3].map((k) => periodStart(r, k)), ['2026-02-28', '2026-05-28', '2026-08-28']);
    });
    it('periodsDue and countPeriodsDue start at the anchor', () => {
      const r = rebase(scheduleOf('2026-01-01', monthly, null), 2, weekly);
      assert.deepEqual(periodsDue(r, 0, '2026-03-15').map((p) => [p.index, p.start]), [[2, '2026-03-01'], [3, '2026-03-08'], [4, '2026-03-15']]);
      assert.equal(countPeriodsDue(r, 0, '2026-03-15'), 3);
    });
  });
});

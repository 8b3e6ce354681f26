import assert from 'node:assert/strict';
import { ReminderCadenceStep, ReminderSettingsReplace } from '../../contracts/reminders.ts';
import { ReminderHistoryItem, ReminderHistoryMeta } from '../../contracts/reminder-history.ts';
import { ReminderFlowStep } from '../../contracts/reminder-flows.ts';
import {
  FEE_INTERVAL_DAYS,
  FEE_REMINDERS_PER_ARREARS,
  FEE_REMINDERS_PER_INVOICE,
  handOverDay,
  HAND_OVER_AFTER_DAYS,
  isTimeBarred,
  LIMITATION_YEARS,
  MAX_NUMBERED_REMINDERS,
  missingSellerDetails,
  nextFeeAllowedOn,
  paakravDeadline,
  PAAKRAV_DEADLINE_DAYS,
  STATUTORY_FEE_OERE,
  timeBarredOn,
} from '../../services/law/danish-law.ts';

/** The statutory numbers and predicates (services/law/danish-law.ts), and the API contract's bounds that repeat them. */
describe('the law module', () => {
  it('holds the statutes’ numbers', () => {
    assert.equal(STATUTORY_FEE_OERE, 10_000); // Renteloven § 9 b stk. 1: 100 kr
    assert.equal(FEE_REMINDERS_PER_INVOICE, 3); // § 9 b stk. 2
    assert.equal(FEE_REMINDERS_PER_ARREARS, 3);
    assert.equal(FEE_INTERVAL_DAYS, 10);
    assert.equal(PAAKRAV_DEADLINE_DAYS, 10); // Inkassoloven § 10
    assert.equal(HAND_OVER_AFTER_DAYS, 11);
    assert.equal(LIMITATION_YEARS, 3); // Forældelsesloven § 3
  });

  const dates: [string, { fee: string; deadline: string; handOver: string; barred: string }][] = [
    ['2026-01-10', { fee: '2026-01-20', deadline: '2026-01-20', handOver: '2026-01-21', barred: '2029-01-10' }],
    ['2026-12-25', { fee: '2027-01-04', deadline: '2027-01-04', handOver: '2027-01-05', barred: '2029-12-25' }],
    ['2024-02-29', { fee: '2024-03-10', deadline: '2024-03-10', handOver: '2024-03-11', barred: '2027-02-28' }],
    ['2028-02-19', { fee: '2028-02-29', deadline: '2028-02-29', handOver: '2028-03-01', barred: '2031-02-19' }],
  ];
  for (const [on, expected] of dates) {
    it(`dates from ${on}: next fee ${expected.fee}, deadline ${expected.deadline}, hand-over ${expected.handOver}, time-barred ${expected.barred}`, () => {
      assert.equal(nextFeeAllowedOn(on), expected.fee);
      assert.equal(paakravDeadline(on), expected.deadline);
      assert.equal(handOverDay(on), expected.handOver);
      assert.equal(timeBarredOn(on), expected.barred);
    });
  }

  it('a claim is time-barred from the day its limitation period ends, not the day before', () => {
    assert.equal(isTimeBarred('2026-01-10', '2029-01-09'), false);
    assert.equal(isTimeBarred('2026-01-10', '2029-01-10'), true);
    assert.equal(isTimeBarred('2024-02-29', '2027-02-28'), true);
  });

  it('names the § 58 seller details missing, blank counting as missing, in order', () => {
    const complete = { name: 'Bager Hansen ApS', street: 'Nørregade 1', postalCode: '8000', city: 'Aarhus C', cvr: '12345678' };
    assert.deepEqual(missingSellerDetails(complete), []);
    assert.deepEqual(missingSellerDetails({ ...complete, cvr: null, street: '  ' }), ['street', 'cvr']);
    assert.deepEqual(missingSellerDetails({ name: null, street: null, postalCode: null, city: null, cvr: null }), ['name', 'street', 'postalCode', 'city', 'cvr']);
  });

  it('the API contract’s bounds are the law’s numbers (the contract cannot import them)', () => {
    // The schemas' keywords as the JSON Schema they are (TypeBox's types do not expose them).
    const kw = (schema: unknown, keyword: 'maximum' | 'maxItems'): unknown => (schema as Record<string, unknown>)[keyword];
    const nonNull = (schema: unknown): unknown => (schema as { anyOf: unknown[] }).anyOf[0];
    const settings = ReminderSettingsReplace.properties;
    assert.equal(kw(settings.maxReminders, 'maximum'), MAX_NUMBERED_REMINDERS);
    assert.equal(kw(ReminderCadenceStep.properties.reminderNumber, 'maximum'), MAX_NUMBERED_REMINDERS);
    assert.equal(kw(settings.cadence, 'maxItems'), MAX_NUMBERED_REMINDERS);
    assert.equal(kw(nonNull(settings.feeOere), 'maximum'), STATUTORY_FEE_OERE);
    assert.equal(kw(nonNull(ReminderFlowStep.properties.fee), 'maximum'), STATUTORY_FEE_OERE);
    assert.equal(kw(ReminderHistoryItem.properties.feeOere, 'maximum'), STATUTORY_FEE_OERE);
    assert.equal(kw(ReminderHistoryMeta.properties.maxReminders, 'maximum'), MAX_NUMBERED_REMINDERS);
  });
});

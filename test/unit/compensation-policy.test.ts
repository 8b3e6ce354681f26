import assert from 'node:assert/strict';
import { compensationDue } from '../../services/reminders/reminder-policy.ts';

/** Renteloven § 9 a, stk. 3: the 310 kr compensation, from a table. */
describe('compensationDue', () => {
  type Facts = Parameters<typeof compensationDue>[0];
  const base: Facts = { enabled: true, customerType: 'company', earlierStepsInArrears: 0, dueDate: '2026-01-10', on: '2026-01-17' };
  const table: [string, Partial<Facts>, number][] = [
    ['the first step of a business customer’s arrears: 310 kr', {}, 31_000],
    ['switched off', { enabled: false }, 0],
    ['a person is never charged', { customerType: 'person' }, 0],
    ['a later step of the same arrears', { earlierStepsInArrears: 1 }, 0],
    ['a time-barred claim (due + 3 years)', { on: '2029-01-10' }, 0],
    ['the day before it is time-barred', { on: '2029-01-09' }, 31_000],
  ];
  for (const [why, change, expected] of table) it(why, () => assert.equal(compensationDue({ ...base, ...change }), expected));
});

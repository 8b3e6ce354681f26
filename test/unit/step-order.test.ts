import assert from 'node:assert/strict';
import { compareSteps, firstInOrder, type OrderedStep } from '../../services/reminders/step-order.ts';

/** The order of one customer's due reminder steps (docs/reminders.md, "One customer's steps in a fixed order"). */
describe('step order: date, then the oldest due date, then the lowest invoice number', () => {
  const step = (invoiceId: string, date: string, dueDate: string, number: number): OrderedStep => ({ invoiceId, date, dueDate, number });

  const cases: [string, OrderedStep, OrderedStep, -1 | 0 | 1][] = [
    ['an earlier date first, whatever the due dates', step('a', '2026-03-01', '2026-02-20', 9), step('b', '2026-03-02', '2026-01-01', 1), -1],
    ['an earlier date first, whatever the numbers', step('a', '2026-03-02', '2026-02-20', 1), step('b', '2026-03-01', '2026-02-20', 9), 1],
    ['same date: the older due date first', step('a', '2026-03-01', '2026-02-10', 7), step('b', '2026-03-01', '2026-02-11', 2), -1],
    ['same date: the older due date first (reversed)', step('a', '2026-03-01', '2026-02-12', 2), step('b', '2026-03-01', '2026-02-11', 7), 1],
    ['same date and due date: the lower number first', step('a', '2026-03-01', '2026-02-10', 3), step('b', '2026-03-01', '2026-02-10', 12), -1],
    ['numbers compare as numbers, not text', step('a', '2026-03-01', '2026-02-10', 10), step('b', '2026-03-01', '2026-02-10', 9), 1],
    ['the same number (two series): the id decides', step('a', '2026-03-01', '2026-02-10', 5), step('b', '2026-03-01', '2026-02-10', 5), -1],
    ['the same step', step('a', '2026-03-01', '2026-02-10', 5), step('a', '2026-03-01', '2026-02-10', 5), 0],
  ];
  for (const [name, a, b, expected] of cases) {
    it(name, () => {
      assert.equal(Math.sign(compareSteps(a, b)), expected);
      assert.equal(Math.sign(compareSteps(b, a)), -expected || 0);
    });
  }

  it('firstInOrder picks the same step whatever order it is given the steps in', () => {
    const steps = [
      step('e', '2026-03-01', '2026-02-10', 15),
      step('c', '2026-03-01', '2026-02-10', 13),
      step('x', '2026-02-28', '2026-02-20', 99),
      step('a', '2026-03-01', '2026-02-09', 20),
      step('d', '2026-03-01', '2026-02-10', 14),
    ];
    const sorted = [...steps].sort(compareSteps).map((s) => s.invoiceId);
    assert.deepEqual(sorted, ['x', 'a', 'c', 'd', 'e']);
    // Every rotation and the reverse of the list: the same first step.
    for (let r = 0; r < steps.length; r++) {
      const rotated = [...steps.slice(r), ...steps.slice(0, r)];
      assert.equal(firstInOrder(rotated)?.invoiceId, 'x');
      assert.equal(firstInOrder([...rotated].reverse())?.invoiceId, 'x');
    }
    assert.equal(firstInOrder(steps.filter((s) => s.invoiceId !== 'x'))?.invoiceId, 'a');
    assert.equal(firstInOrder([]), undefined);
  });
});

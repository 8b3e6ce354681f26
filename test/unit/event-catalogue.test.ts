import assert from 'node:assert/strict';
import { EVENT_FAMILY_BLOCK, EVENT_TYPE_FAMILY } from '../../contracts/event-catalogue.ts';
import { EVENT_BLOCKS, EVENT_FAMILIES, EVENT_TYPES } from '../../contracts/events.ts';

/** The family block each event type is delivered with, which recordEvent derives from the type. */
describe('event catalogue', () => {
  it('gives every one of the 34 event types a family, and nothing else', () => {
    assert.equal(EVENT_TYPES.length, 34);
    assert.deepEqual(Object.keys(EVENT_TYPE_FAMILY).sort(), [...EVENT_TYPES].sort());
  });

  it('files each type under the family its name starts with', () => {
    for (const type of EVENT_TYPES) {
      const family = EVENT_TYPE_FAMILY[type];
      assert.ok((EVENT_FAMILIES as readonly string[]).includes(family), type);
      assert.equal(family, type.split('.')[0], type);
    }
  });

  it("delivers each family in its own block, and the reminder and payment-plan families in their invoice's", () => {
    assert.deepEqual(
      EVENT_FAMILIES.map((f) => [f, EVENT_FAMILY_BLOCK[f]]),
      [['invoice', 'invoice'], ['payment', 'payment'], ['customer', 'customer'], ['subscription', 'subscription'], ['sag', 'sag'], ['reminder', 'invoice'], ['payment_plan', 'invoice']],
    );
    for (const block of Object.values(EVENT_FAMILY_BLOCK)) assert.ok((EVENT_BLOCKS as readonly string[]).includes(block), block);
    assert.deepEqual(EVENT_TYPES.filter((t) => t.startsWith('reminder.')), ['reminder.sent', 'reminder.failed']);
    assert.deepEqual(EVENT_TYPES.filter((t) => t.startsWith('payment_plan.')), [
      'payment_plan.created',
      'payment_plan.completed',
      'payment_plan.broken',
      'payment_plan.cancelled',
    ]);
  });
});

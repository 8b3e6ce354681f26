import assert from 'node:assert/strict';
import { EVENT_TYPE_FAMILY } from '../../contracts/event-catalogue.ts';
import { EVENT_FAMILIES, EVENT_TYPES } from '../../contracts/events.ts';

/** The family block each event type is delivered with, which recordEvent derives from the type. */
describe('event catalogue', () => {
  it('gives every one of the 28 event types a family, and nothing else', () => {
    assert.equal(EVENT_TYPES.length, 28);
    assert.deepEqual(Object.keys(EVENT_TYPE_FAMILY).sort(), [...EVENT_TYPES].sort());
  });

  it('files each type under the family its name starts with', () => {
    for (const type of EVENT_TYPES) {
      const family = EVENT_TYPE_FAMILY[type];
      assert.ok((EVENT_FAMILIES as readonly string[]).includes(family), type);
      assert.equal(family, type.split('.')[0], type);
    }
  });
});

import assert from 'node:assert/strict';
import { DomainError } from '../../services/shared/errors.ts';
import { defineLifecycle, LIFECYCLES, TransitionRefused } from '../../services/shared/lifecycle.ts';
import { testDb } from '../helpers/context.ts';

/**
 * The kit's guarded UPDATE against real PostgreSQL, on a table of the test's own (a temporary table, so one
 * transaction holds it): the transition moves only from its from-states, refuses with one error otherwise, writes
 * the extra columns and touches updated_at, keeps tenants apart, and reads the old state when asked.
 */
const DOOR = defineLifecycle({
  name: 'door',
  table: 'kit_doors',
  column: 'state',
  states: ['closed', 'open', 'locked'],
  transitions: {
    open: { from: ['closed'], to: 'open' },
    close: { from: ['open'], to: 'closed' },
    lock: { from: ['closed'], to: 'locked' },
  },
});
/** The same door, writing each transition's event into a log table of the test's own: the kit's events hook. */
const LOGGED_DOOR_TRANSITIONS = {
  open: { from: ['closed'], to: 'open', event: 'door.opened' },
  close: { from: ['open'], to: 'closed', event: 'door.closed' },
} as const;
const LOGGED_DOOR = defineLifecycle({
  name: 'logged door',
  table: 'kit_doors',
  column: 'state',
  states: ['closed', 'open', 'locked'],
  transitions: LOGGED_DOOR_TRANSITIONS,
  async onTransition(sql, moved) {
    const { event } = LOGGED_DOOR_TRANSITIONS[moved.transition];
    const [row] = await sql<{ seq: number }[]>`
      INSERT INTO kit_door_log (id, event, from_state, to_state) VALUES (${moved.id}, ${event}, ${moved.from ?? null}, ${moved.to}) RETURNING seq`;
    return row!.seq;
  },
});
/** A nullable column whose NULL means "not decided yet": the door's paint, chosen once. */
const PAINT = defineLifecycle({
  name: 'door paint',
  table: 'kit_doors',
  column: 'painted',
  states: ['red', 'blue'],
  transitions: { paintRed: { from: [], fromUnset: true, to: 'red' }, repaint: { from: ['red'], fromUnset: true, to: 'blue' } },
});
// Not tables of the migrations: out of the registry the CHECK test walks.
LIFECYCLES.splice(LIFECYCLES.indexOf(PAINT), 1);
LIFECYCLES.splice(LIFECYCLES.indexOf(DOOR), 1);
LIFECYCLES.splice(LIFECYCLES.findIndex((l) => l.name === LOGGED_DOOR.name), 1);

const ORG = '00000000-0000-4000-8000-000000000001';
const OTHER = '00000000-0000-4000-8000-000000000002';
const ID = '00000000-0000-4000-8000-0000000000aa';

class Rollback extends Error {}

async function withDoors(fn: (tx: Parameters<Parameters<ReturnType<typeof testDb>['db']['tx']>[0]>[0]) => Promise<void>): Promise<void> {
  const { db } = testDb();
  await db
    .tx(async (tx) => {
      await tx`CREATE TEMP TABLE kit_doors (organization_id uuid NOT NULL, id uuid NOT NULL, state text NOT NULL, painted text,
                 updated_at timestamptz NOT NULL DEFAULT '2000-01-01') ON COMMIT DROP`;
      await tx`INSERT INTO kit_doors (organization_id, id, state) VALUES (${ORG}, ${ID}, 'closed')`;
      await tx`CREATE TEMP TABLE kit_door_log (seq serial, id uuid NOT NULL, event text NOT NULL, from_state text, to_state text NOT NULL) ON COMMIT DROP`;
      await fn(tx);
      throw new Rollback();
    })
    .catch((err) => {
      if (!(err instanceof Rollback)) throw err;
    });
}

describe('lifecycle kit (guarded UPDATE on PostgreSQL)', () => {
  it('moves a row from a from-state, writes the extra columns, touches updated_at and returns what was asked', async () => {
    await withDoors(async (tx) => {
      const r = await DOOR.transition(tx, ID, 'open', { organizationId: ORG, set: tx`painted = ${'red'}`, returning: 'painted, updated_at', readFrom: true });
      assert.equal(r.from, 'closed');
      assert.equal(r.to, 'open');
      assert.equal(r.row.painted, 'red');
      assert.ok((r.row.updated_at as Date).getFullYear() > 2000);
      const [row] = await tx<{ state: string }[]>`SELECT state FROM kit_doors WHERE id = ${ID}`;
      assert.equal(row!.state, 'open');
    });
  });

  it('refuses a row in another state with TransitionRefused (422 invalid_transition) and changes nothing', async () => {
    await withDoors(async (tx) => {
      await assert.rejects(DOOR.transition(tx, ID, 'close', { organizationId: ORG }), (err: unknown) => {
        assert.ok(err instanceof TransitionRefused && err instanceof DomainError);
        assert.equal(err.code, 'invalid_transition');
        assert.equal(err.status, 422);
        return true;
      });
      const [row] = await tx<{ state: string; updated_at: Date }[]>`SELECT state, updated_at FROM kit_doors WHERE id = ${ID}`;
      assert.equal(row!.state, 'closed');
      assert.equal(row!.updated_at.getFullYear(), 2000);
    });
  });

  it("refuses another organisation's row, and answers the use case's own error when it names one", async () => {
    await withDoors(async (tx) => {
      await assert.rejects(DOOR.transition(tx, ID, 'open', { organizationId: OTHER, refused: () => new DomainError('customer_not_found', 'no such door') }), /no such door/);
      const [row] = await tx<{ state: string }[]>`SELECT state FROM kit_doors WHERE id = ${ID}`;
      assert.equal(row!.state, 'closed');
    });
  });

  it('writes what a transition means through onTransition, in the same transaction, and nothing for a refused one', async () => {
    await withDoors(async (tx) => {
      const r = await LOGGED_DOOR.transition(tx, ID, 'open', { organizationId: ORG, readFrom: true });
      assert.equal(typeof r.written, 'number');
      await assert.rejects(LOGGED_DOOR.transition(tx, ID, 'open', { organizationId: ORG }), TransitionRefused);
      await LOGGED_DOOR.transition(tx, ID, 'close', { organizationId: ORG });
      const log = await tx<{ event: string; from_state: string | null; to_state: string }[]>`SELECT event, from_state, to_state FROM kit_door_log ORDER BY seq`;
      assert.deepEqual(
        log.map((l) => [l.event, l.from_state, l.to_state]),
        [
          ['door.opened', 'closed', 'open'],
          ['door.closed', null, 'closed'],
        ],
      );
    });
  });

  it('starts a fromUnset transition from NULL, and refuses it once the column holds a state it does not list', async () => {
    await withDoors(async (tx) => {
      await PAINT.transition(tx, ID, 'paintRed', { organizationId: ORG });
      await assert.rejects(PAINT.transition(tx, ID, 'paintRed', { organizationId: ORG }), /door paint cannot be moved \(paintRed\): it does not exist or is not in unset/);
      assert.equal(await PAINT.tryTransition(tx, ID, 'paintRed', { organizationId: ORG }), undefined);
      const r = await PAINT.transition(tx, ID, 'repaint', { organizationId: ORG, readFrom: true });
      assert.deepEqual([r.from, r.to], ['red', 'blue']);
      const [row] = await tx<{ painted: string }[]>`SELECT painted FROM kit_doors WHERE id = ${ID}`;
      assert.equal(row!.painted, 'blue');
    });
  });

  it('answers can, target and assert from the table, and builds state lists only from its own states', () => {
    assert.equal(DOOR.can('closed', 'lock'), true);
    assert.equal(DOOR.can('open', 'lock'), false);
    assert.equal(DOOR.target('closed', 'open'), 'open');
    assert.equal(DOOR.target('locked', 'open'), undefined);
    assert.throws(() => DOOR.assert('locked', 'open'), (err: unknown) => err instanceof TransitionRefused && /door is locked: open needs closed/.test(err.message));
    assert.equal(DOOR.inList(['open', 'closed']), "('open', 'closed')");
    assert.throws(() => DOOR.inList(["x') OR ('1" as 'open']), /not a door state/);
    assert.equal(DOOR.isState('open'), true);
    assert.equal(DOOR.isState('ajar'), false);
  });

  it('refuses a definition with a transition into an unknown state', () => {
    assert.throws(
      () => defineLifecycle({ name: 'bad', table: 'bad', column: 'state', states: ['a'], transitions: { go: { from: ['a'], to: 'b' as 'a' } } }),
      /not a bad state: b/,
    );
  });
});

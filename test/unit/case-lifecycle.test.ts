import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  canTransition,
  CASE_STATES,
  CASE_TRANSITIONS,
  caseStatusOf,
  CLOSED_CASE_STATES,
  eventsFor,
  isCaseClosed,
  OPEN_CASE_STATES,
  type CaseState,
  type CaseTransitionName,
} from '../../services/cases/case-lifecycle.ts';
import { CaseStateSchema, CaseStatusFlag } from '../../contracts/cases.ts';
import { EVENT_TYPES } from '../../contracts/events.ts';

const migration = readFileSync(join(import.meta.dirname, '..', '..', 'services', 'db', 'migrations', '016_collection_cases.sql'), 'utf8');
const literals = (schema: unknown): string[] => (schema as { anyOf: { const: string }[] }).anyOf.map((s) => s.const);

/** The collection case lifecycle of docs/collections.md, as data the case workflow follows. */
describe('case lifecycle', () => {
  it('has the five states, in the API contract and in the CHECK on collection_cases.state', () => {
    assert.deepEqual([...CASE_STATES], ['OPRETTET', 'PAAKRAV_SENDT', 'OVERDRAGET', 'AFSLUTTET', 'TILBAGEKALDT']);
    assert.deepEqual(literals(CaseStateSchema), [...CASE_STATES]);
    const check = /state\s+text NOT NULL DEFAULT 'OPRETTET'\s+CHECK \(state IN \(([^)]*)\)\)/.exec(migration);
    assert.ok(check, 'the CHECK on state');
    assert.deepEqual([...check[1]!.matchAll(/'([^']*)'/g)].map((m) => m[1]), [...CASE_STATES]);
    assert.deepEqual([...OPEN_CASE_STATES, ...CLOSED_CASE_STATES].sort(), [...CASE_STATES].sort());
  });

  it('maps each state to its status as decided', () => {
    const table: [CaseState, string, boolean][] = [
      ['OPRETTET', 'aktiv', false],
      ['PAAKRAV_SENDT', 'afventer', false],
      ['OVERDRAGET', 'aktiv', false],
      ['AFSLUTTET', 'lukket', true],
      ['TILBAGEKALDT', 'lukket', true],
    ];
    for (const [state, status, closed] of table) {
      assert.equal(caseStatusOf(state), status, state);
      assert.equal(isCaseClosed(state), closed, state);
    }
    assert.deepEqual(literals(CaseStatusFlag), ['aktiv', 'afventer', 'lukket']);
  });

  it('has the transitions of docs/collections.md, each with its own sag.* event', () => {
    assert.deepEqual(
      Object.fromEntries(Object.entries(CASE_TRANSITIONS).map(([name, t]) => [name, `${t.from.join('|')} → ${t.to} (${t.event})`])),
      {
        sendPaakrav: 'OPRETTET → PAAKRAV_SENDT (sag.paakrav_sendt)',
        handOver: 'PAAKRAV_SENDT → OVERDRAGET (sag.overdraget)',
        settle: 'OPRETTET|PAAKRAV_SENDT|OVERDRAGET → AFSLUTTET (sag.afsluttet)',
        withdraw: 'OPRETTET|PAAKRAV_SENDT|OVERDRAGET → TILBAGEKALDT (sag.tilbagekaldt)',
      },
    );
    for (const t of Object.values(CASE_TRANSITIONS)) assert.ok((EVENT_TYPES as readonly string[]).includes(t.event));
  });

  it('allows exactly these moves, and none out of a closed state', () => {
    const names = Object.keys(CASE_TRANSITIONS) as CaseTransitionName[];
    // state → the transitions that may start from it
    const table: [CaseState, CaseTransitionName[]][] = [
      ['OPRETTET', ['sendPaakrav', 'settle', 'withdraw']],
      ['PAAKRAV_SENDT', ['handOver', 'settle', 'withdraw']],
      ['OVERDRAGET', ['settle', 'withdraw']],
      ['AFSLUTTET', []],
      ['TILBAGEKALDT', []],
    ];
    for (const [state, allowed] of table) {
      assert.deepEqual(names.filter((n) => canTransition(state, n)), allowed, state);
    }
  });

  it('adds sag.status_aendret after a transition exactly when the status changes', () => {
    const table: [CaseState, CaseTransitionName, string[]][] = [
      ['OPRETTET', 'sendPaakrav', ['sag.paakrav_sendt', 'sag.status_aendret']], // aktiv → afventer
      ['PAAKRAV_SENDT', 'handOver', ['sag.overdraget', 'sag.status_aendret']], // afventer → aktiv
      ['OPRETTET', 'settle', ['sag.afsluttet', 'sag.status_aendret']],
      ['PAAKRAV_SENDT', 'settle', ['sag.afsluttet', 'sag.status_aendret']],
      ['OVERDRAGET', 'settle', ['sag.afsluttet', 'sag.status_aendret']],
      ['OPRETTET', 'withdraw', ['sag.tilbagekaldt', 'sag.status_aendret']],
      ['OVERDRAGET', 'withdraw', ['sag.tilbagekaldt', 'sag.status_aendret']],
    ];
    for (const [from, transition, events] of table) assert.deepEqual(eventsFor(from, transition), events, `${from} ${transition}`);
    assert.throws(() => eventsFor('AFSLUTTET', 'withdraw'), /cannot start from AFSLUTTET/);
    assert.throws(() => eventsFor('OPRETTET', 'handOver'), /cannot start from OPRETTET/);
  });
});

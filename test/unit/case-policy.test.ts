import assert from 'node:assert/strict';
import { CASE_STATES } from '../../services/cases/case-lifecycle.ts';
import { isPaakrav, nextCaseStep, paakravDates, type CaseDecision, type CaseFacts, type LastReminder } from '../../services/cases/case-policy.ts';

/** The collection case's decisions from tables: the påkrav (the invoice's demand letter, or the case's own), the wait
 * for the hand-over day (påkrav date + 11, Inkassoloven § 10), the hand-over, and the states where nothing is timed. */

const TODAY = '2026-03-02';
const facts = (over: Partial<CaseFacts> = {}): CaseFacts => ({ state: 'OPRETTET', paakravSentOn: null, lastReminder: null, ...over });
const reminder = (over: Partial<LastReminder> = {}): LastReminder => ({ demandLetter: true, status: 'sent', sentOn: '2026-02-20', ...over });

describe('case policy: the next step', () => {
  const cases: [string, CaseFacts, string, CaseDecision][] = [
    ['a case from POST /v1/cases sends its own påkrav today', facts(), TODAY, { kind: 'send_paakrav', sentOn: TODAY }],
    ['the invoice’s demand letter that went out is the påkrav, dated its sent day', facts({ lastReminder: reminder() }), TODAY, { kind: 'record_paakrav', sentOn: '2026-02-20' }],
    ['a last reminder that was not the demand letter: the case sends its own', facts({ lastReminder: reminder({ demandLetter: false }) }), TODAY, { kind: 'send_paakrav', sentOn: TODAY }],
    ['a demand letter that could not be delivered: the case sends its own', facts({ lastReminder: reminder({ status: 'failed' }) }), TODAY, { kind: 'send_paakrav', sentOn: TODAY }],
    ['påkrav sent: wait for the hand-over day, påkrav date + 11', facts({ state: 'PAAKRAV_SENDT', paakravSentOn: '2026-03-02' }), TODAY, { kind: 'wait', date: '2026-03-13' }],
    ['on the deadline itself (påkrav date + 10) it still waits', facts({ state: 'PAAKRAV_SENDT', paakravSentOn: '2026-03-02' }), '2026-03-12', { kind: 'wait', date: '2026-03-13' }],
    ['on the hand-over day it hands over', facts({ state: 'PAAKRAV_SENDT', paakravSentOn: '2026-03-02' }), '2026-03-13', { kind: 'hand_over', handedOverOn: '2026-03-13' }],
    ['a late wake hands over on the day it wakes', facts({ state: 'PAAKRAV_SENDT', paakravSentOn: '2026-03-02' }), '2026-04-01', { kind: 'hand_over', handedOverOn: '2026-04-01' }],
    ['across a month end and a leap day', facts({ state: 'PAAKRAV_SENDT', paakravSentOn: '2028-02-20' }), '2028-02-29', { kind: 'wait', date: '2028-03-02' }],
    ['handed over: nothing more is timed', facts({ state: 'OVERDRAGET', paakravSentOn: '2026-03-02' }), TODAY, { kind: 'done' }],
    ['settled: nothing more is timed', facts({ state: 'AFSLUTTET', lastReminder: reminder() }), TODAY, { kind: 'done' }],
    ['withdrawn: nothing more is timed', facts({ state: 'TILBAGEKALDT', paakravSentOn: '2026-03-02' }), '2026-03-13', { kind: 'done' }],
  ];
  for (const [name, f, today, expected] of cases) {
    it(name, () => assert.deepEqual(nextCaseStep(f, today), expected));
  }

  it('decides for every state of the lifecycle', () => {
    for (const state of CASE_STATES) {
      assert.ok(nextCaseStep(facts({ state, paakravSentOn: '2026-03-02' }), TODAY), state);
    }
  });

  it('refuses a case in PAAKRAV_SENDT without a påkrav date (a broken row, not a decision)', () => {
    assert.throws(() => nextCaseStep(facts({ state: 'PAAKRAV_SENDT' }), TODAY), /påkrav date/);
  });
});

describe('case policy: the påkrav', () => {
  const cases: [string, LastReminder | null, boolean][] = [
    ['none', null, false],
    ['the demand letter, sent', reminder(), true],
    ['the demand letter, undeliverable', reminder({ status: 'failed' }), false],
    ['a reminder before the demand letter', reminder({ demandLetter: false }), false],
  ];
  for (const [name, last, expected] of cases) {
    it(`${name}: ${expected ? 'is' : 'is not'} the påkrav`, () => assert.equal(isPaakrav(last), expected));
  }

  const dates: [string, { deadline: string; handOverOn: string }][] = [
    ['2026-03-02', { deadline: '2026-03-12', handOverOn: '2026-03-13' }],
    ['2026-12-25', { deadline: '2027-01-04', handOverOn: '2027-01-05' }],
    ['2028-02-19', { deadline: '2028-02-29', handOverOn: '2028-03-01' }],
  ];
  for (const [sentOn, expected] of dates) {
    it(`a påkrav sent on ${sentOn}: deadline ${expected.deadline}, hand-over ${expected.handOverOn}`, () => assert.deepEqual(paakravDates(sentOn), expected));
  }
});

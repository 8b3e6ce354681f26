import assert from 'node:assert/strict';
import { flowGraphProblems, validateFlowGraph } from '../../services/reminder-flows/validate-flow-graph.ts';
import { STANDARD_FLOW } from '../../services/reminder-flows/standard-flow.ts';
import { DomainError } from '../../services/shared/errors.ts';

const r = (id: string, daysAfterDue: number, extra: Record<string, unknown> = {}) => ({ id, action: 'reminder', daysAfterDue, ...extra });
const pr = (id: string, daysAfterDue: number, extra: Record<string, unknown> = {}) => ({ id, action: 'payment_reminder', daysAfterDue, ...extra });
const c = (id: string, daysAfterDue: number, extra: Record<string, unknown> = {}) => ({ id, action: 'collections', daysAfterDue, ...extra });
const paths = (graph: unknown) => flowGraphProblems(graph).map((p) => p.path);

describe('validateFlowGraph', () => {
  it('accepts a valid graph and fills in the defaults', () => {
    const graph = validateFlowGraph({
      steps: [pr('p', 3), r('r1', 10, { fee: 0 }), r('r2', 20, { channel: 'letter' }), r('r3', 30, { when: { customerType: 'company' } }), c('c', 41)],
    });
    assert.deepEqual(graph, {
      steps: [
        { id: 'p', action: 'payment_reminder', daysAfterDue: 3, channel: 'email_or_letter' },
        { id: 'r1', action: 'reminder', daysAfterDue: 10, fee: 0, channel: 'email_or_letter' },
        { id: 'r2', action: 'reminder', daysAfterDue: 20, fee: 'statutory', channel: 'letter' },
        { id: 'r3', action: 'reminder', daysAfterDue: 30, fee: 'statutory', channel: 'email_or_letter', when: { customerType: 'company' } },
        { id: 'c', action: 'collections', daysAfterDue: 41, channel: 'email_or_letter' },
      ],
    });
  });

  it('accepts the platform standard flow as it is published', () => {
    assert.deepEqual(validateFlowGraph(STANDARD_FLOW.graph), STANDARD_FLOW.graph);
  });

  const cases: [string, unknown, string[]][] = [
    ['a graph that is not an object', [1], ['/graph']],
    ['null', null, ['/graph']],
    ['no steps', {}, ['/graph/steps']],
    ['steps not an array', { steps: {} }, ['/graph/steps']],
    ['an unknown top-level key', { steps: [r('a', 7)], version: 2 }, ['/graph/version']],
    ['no step at all', { steps: [] }, ['/graph/steps']],
    ['11 steps', { steps: Array.from({ length: 11 }, (_, i) => pr(`s${i}`, i + 1, { when: { customerType: 'person' } })) }, ['/graph/steps', ...Array.from({ length: 10 }, (_, i) => `/graph/steps/${i + 1}/action`)]],
    ['a step that is not an object', { steps: ['r1'] }, ['/graph/steps/0']],
    ['an unknown step key', { steps: [r('a', 7, { note: 'x' })] }, ['/graph/steps/0/note']],
    ['an unknown key with / and ~ in its name', { steps: [r('a', 7, { 'a/b~': 1 })] }, ['/graph/steps/0/a~1b~0']],
    ['a missing id', { steps: [{ action: 'reminder', daysAfterDue: 7 }] }, ['/graph/steps/0/id']],
    ['an empty id', { steps: [r('', 7)] }, ['/graph/steps/0/id']],
    ['an id of 41 characters', { steps: [r('x'.repeat(41), 7)] }, ['/graph/steps/0/id']],
    ['an id that is a number', { steps: [{ id: 1, action: 'reminder', daysAfterDue: 7 }] }, ['/graph/steps/0/id']],
    ['a duplicate id', { steps: [r('a', 7), r('b', 14), r('a', 21)] }, ['/graph/steps/2/id']],
    ['an unknown action', { steps: [r('a', 7), { id: 'b', action: 'sms', daysAfterDue: 14 }] }, ['/graph/steps/1/action']],
    ['a missing daysAfterDue', { steps: [{ id: 'a', action: 'reminder' }] }, ['/graph/steps/0/daysAfterDue']],
    ['daysAfterDue 0', { steps: [r('a', 0)] }, ['/graph/steps/0/daysAfterDue']],
    ['daysAfterDue 366', { steps: [r('a', 366)] }, ['/graph/steps/0/daysAfterDue']],
    ['daysAfterDue 7.5', { steps: [r('a', 7.5)] }, ['/graph/steps/0/daysAfterDue']],
    ['days not strictly increasing', { steps: [r('a', 7), r('b', 14), r('c', 14)] }, ['/graph/steps/2/daysAfterDue']],
    ['days going back', { steps: [r('a', 7), r('b', 5)] }, ['/graph/steps/1/daysAfterDue']],
    ['a fee of 10001', { steps: [r('a', 7, { fee: 10001 })] }, ['/graph/steps/0/fee']],
    ['a negative fee', { steps: [r('a', 7, { fee: -1 })] }, ['/graph/steps/0/fee']],
    ['a fee as text', { steps: [r('a', 7, { fee: '100' })] }, ['/graph/steps/0/fee']],
    ['a fee on a payment reminder', { steps: [pr('a', 3, { fee: 0 }), r('b', 7)] }, ['/graph/steps/0/fee']],
    ['a fee on collections', { steps: [r('a', 7), c('b', 30, { fee: 'statutory' })] }, ['/graph/steps/1/fee']],
    ['an unknown channel', { steps: [r('a', 7, { channel: 'sms' })] }, ['/graph/steps/0/channel']],
    ['when not an object', { steps: [r('a', 7, { when: 'person' })] }, ['/graph/steps/0/when']],
    ['an unknown customer type', { steps: [r('a', 7, { when: { customerType: 'public' } })] }, ['/graph/steps/0/when/customerType']],
    ['an unknown key in when', { steps: [r('a', 7, { when: { country: 'DK' } })] }, ['/graph/steps/0/when/country']],
    ['two payment reminders', { steps: [pr('a', 1), pr('b', 3), r('c', 7)] }, ['/graph/steps/1/action']],
    ['a payment reminder after a reminder', { steps: [r('a', 7), pr('b', 10)] }, ['/graph/steps/1/action']],
    ['four reminders', { steps: [r('a', 7), r('b', 14), r('c', 21), r('d', 28)] }, ['/graph/steps/3/action']],
    ['two collections steps', { steps: [r('a', 7), c('b', 30), c('c', 40)] }, ['/graph/steps/1/action', '/graph/steps/2/action']],
    ['collections not last', { steps: [r('a', 7), c('b', 30), r('c', 45)] }, ['/graph/steps/1/action']],
    ['collections 10 days after the last reminder', { steps: [r('a', 7), r('b', 14), c('c', 24)] }, ['/graph/steps/2/daysAfterDue']],
  ];
  for (const [what, graph, expected] of cases) {
    it(`reports ${what} at ${expected.join(', ')}`, () => {
      assert.deepEqual(paths(graph), expected);
    });
  }

  it('judges the rules per customer type: one payment reminder and three reminders for each type is fine', () => {
    const graph = {
      steps: [
        pr('p_person', 2, { when: { customerType: 'person' } }),
        pr('p_company', 3, { when: { customerType: 'company' } }),
        r('r1', 7), r('r2', 14), r('r3_person', 21, { when: { customerType: 'person' } }), r('r3_company', 22, { when: { customerType: 'company' } }),
        c('c_company', 33, { when: { customerType: 'company' } }),
      ],
    };
    assert.deepEqual(flowGraphProblems(graph), []);
  });

  it('names the customer type when a rule is broken for one type only', () => {
    const problems = flowGraphProblems({ steps: [r('a', 7), r('b', 14), r('c', 21), r('d', 28, { when: { customerType: 'company' } })] });
    assert.deepEqual(problems, [{ path: '/graph/steps/3/action', message: 'at most 3 reminder steps (for company customers)' }]);
  });

  it('reports every rule a graph breaks, each at its pointer, as one 422 invalid_flow_graph', () => {
    const graph = {
      steps: [
        r('a', 7, { fee: 20000 }),
        pr('b', 5, { fee: 0 }),
        r('a', 14, { channel: 'fax', extra: true }),
        r('d', 21),
        r('e', 28),
        c('f', 30),
      ],
    };
    let error: unknown;
    try {
      validateFlowGraph(graph);
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof DomainError);
    assert.equal(error.code, 'invalid_flow_graph');
    assert.equal(error.status, 422);
    assert.deepEqual(error.details, [
      { path: '/graph/steps/0/fee', message: 'must be "statutory" or a whole number of øre from 0 to 10000' },
      { path: '/graph/steps/1/fee', message: 'is allowed on reminder steps only, not on payment_reminder' },
      { path: '/graph/steps/1/daysAfterDue', message: "must be greater than the previous step's daysAfterDue (7)" },
      { path: '/graph/steps/1/action', message: 'the payment_reminder must come before any reminder' },
      { path: '/graph/steps/2/extra', message: 'is not allowed' },
      { path: '/graph/steps/2/channel', message: 'must be one of email, letter, email_or_letter' },
      { path: '/graph/steps/2/id', message: 'must be unique: "a" is used by an earlier step' },
      { path: '/graph/steps/4/action', message: 'at most 3 reminder steps' },
      { path: '/graph/steps/5/daysAfterDue', message: 'collections must come at least 11 days after the last reminder step (day 28), so no earlier than day 39' },
    ]);
  });
});

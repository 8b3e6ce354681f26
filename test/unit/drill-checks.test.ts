import assert from 'node:assert/strict';
import {
  checkCaseSteps,
  checkEvents,
  checkInvoiceMails,
  checkNothingLeft,
  checkNumberSeries,
  checkPayments,
  checkProgress,
  checkRefusals,
  checkReminders,
  checkSilence,
  checkSubscriptionPeriods,
  longestSilence,
  type CaseFact,
  type ReminderFact,
  type SubscriptionFact,
} from '../drill/checks.ts';

/**
 * The fault drill's checks (test/drill/checks.ts), each shown to hold on a clean record and to fail on a doctored
 * one: a lost or doubled payment, a lost event or one under a foreign webhook id, a reminder taken twice or mailed
 * twice, a case handed over twice, a period run twice, a gap in a number series, a silence over the limit, progress
 * too late or never.
 */
describe('fault drill checks', () => {
  const mails = (...ids: string[]) => new Map(ids.map((id) => [`${id}@faktura.invalid`, 1]));

  describe('payments acknowledged vs booked', () => {
    const acks = [
      { key: 'drill-pay-1', paymentId: 'p1', amountOere: 100 },
      { key: 'drill-pay-2', paymentId: 'p2', amountOere: 200 },
      // The deliberate retry of key 2: the same payment again.
      { key: 'drill-pay-2', paymentId: 'p2', amountOere: 200 },
    ];
    const booked = [
      { key: 'drill-pay-1', paymentId: 'p1', amountOere: 100 },
      { key: 'drill-pay-2', paymentId: 'p2', amountOere: 200 },
    ];

    it('holds when every acknowledged payment is booked once', () => {
      const v = checkPayments(acks, booked, []);
      assert.deepEqual([v.ok, v.measured, v.problems], [true, '2 acknowledged, 2 booked: 0 lost, 0 doubled', []]);
    });

    it('fails on a lost payment', () => {
      const v = checkPayments(acks, booked.slice(1), []);
      assert.deepEqual([v.ok, v.measured], [false, '2 acknowledged, 1 booked: 1 lost, 0 doubled']);
      assert.deepEqual(v.problems, ['key drill-pay-1 was acknowledged (payment p1) but nothing is booked']);
    });

    it('fails on a doubled payment: a retry answered with another payment', () => {
      const v = checkPayments([...acks, { key: 'drill-pay-1', paymentId: 'p3', amountOere: 100 }], [...booked, { key: 'drill-pay-1b', paymentId: 'p3', amountOere: 100 }], []);
      assert.equal(v.ok, false);
      assert.deepEqual(v.problems, [
        'key drill-pay-1 was answered with 2 different payments: p1, p3',
        'payment p3 (key drill-pay-1b) is booked but was never acknowledged',
      ]);
    });

    it('fails on a booking no answer accounts for, and on a key never answered', () => {
      const v = checkPayments(acks, [...booked, { key: 'drill-pay-9', paymentId: 'p9', amountOere: 900 }], ['drill-pay-3']);
      assert.equal(v.ok, false);
      assert.equal(v.measured, '2 acknowledged, 3 booked: 0 lost, 1 doubled, 1 unanswered');
      assert.deepEqual(v.problems, ['payment p9 (key drill-pay-9) is booked but was never acknowledged', 'key drill-pay-3 never got a 2xx answer (not booked)']);
    });

    it('fails on a booked amount that differs from the acknowledged one', () => {
      const v = checkPayments(acks, [booked[0]!, { ...booked[1]!, amountOere: 400 }], []);
      assert.deepEqual(v.problems, ['key drill-pay-2: 200 øre acknowledged, 400 øre booked']);
    });
  });

  describe('events committed vs delivered', () => {
    const committed = [
      { id: 'e1', type: 'payment.received' },
      { id: 'e2', type: 'invoice.paid' },
    ];

    it('holds with every event delivered, a repeat under the same webhook id included', () => {
      const v = checkEvents(committed, [
        { webhookId: 'e1', eventId: 'e1' },
        { webhookId: 'e2', eventId: 'e2' },
        { webhookId: 'e2', eventId: 'e2' },
      ]);
      assert.deepEqual([v.ok, v.measured], [true, '2 committed, 2 delivered: 0 lost, 1 repeated (same webhook id)']);
    });

    it('fails on a lost event', () => {
      const v = checkEvents(committed, [{ webhookId: 'e1', eventId: 'e1' }]);
      assert.deepEqual([v.ok, v.problems], [false, ['event e2 (invoice.paid) was committed but never delivered']]);
    });

    it('fails on a repeat under another webhook id, and on a delivery of no committed event', () => {
      const v = checkEvents(committed, [
        { webhookId: 'e1', eventId: 'e1' },
        { webhookId: 'e2', eventId: 'e2' },
        { webhookId: 'x', eventId: 'e2' },
        { webhookId: 'e3', eventId: 'e3' },
      ]);
      assert.deepEqual(v.problems, ['event e2 (invoice.paid) arrived under webhook id x', 'the receiver got 1 deliveries of e3, which is not in the event log']);
    });
  });

  describe('reminders exactly once', () => {
    const r = (id: string, step: string, over: Partial<ReminderFact> = {}): ReminderFact => ({
      id, invoiceId: 'inv1', step, channel: 'email', status: 'sent', delivery: 'done', ...over,
    });
    const taken = [r('r1', 'reminder 1'), r('r2', 'reminder 2')];

    it('holds with one row and one mail per step and nothing overdue', () => {
      const v = checkReminders(taken, [], mails('reminder-r1', 'reminder-r2'));
      assert.deepEqual([v.ok, v.measured], [true, '2 taken, 2 mailed, 0 overdue']);
    });

    it('fails on a double reminder: the same step taken twice', () => {
      const v = checkReminders([...taken, r('r3', 'reminder 2')], [], mails('reminder-r1', 'reminder-r2', 'reminder-r3'));
      assert.deepEqual([v.ok, v.problems], [false, ['invoice inv1 reminder 2 was taken 2 times']]);
    });

    it('fails on a reminder mailed as two messages, and on one never mailed', () => {
      const both = new Map([...mails('reminder-r1'), ['reminder-r1@other.invalid', 1]]);
      const v = checkReminders(taken, [], both);
      assert.deepEqual(v.problems, ['reminder r1 (reminder 1 of inv1) was mailed as 2 messages', 'reminder r2 (reminder 2 of inv1) was mailed as 0 messages']);
    });

    it('fails on a step left behind and on a delivery still pending', () => {
      const v = checkReminders([r('r1', 'reminder 1', { delivery: 'pending' })], [{ invoiceId: 'inv2', step: 'reminder 1', date: '2030-01-08', today: '2030-01-20' }], mails('reminder-r1'));
      assert.deepEqual(v.problems, [
        'invoice inv2: reminder 1 was due on 2030-01-08 and not taken by 2030-01-20',
        'reminder r1 (reminder 1 of inv1) is still waiting for its email',
      ]);
    });
  });

  describe('case steps exactly once', () => {
    const handedOver: CaseFact = {
      id: 'c1', state: 'OVERDRAGET', handedOver: true, handOverDue: false,
      eventTypes: ['sag.oprettet', 'sag.paakrav_sendt', 'sag.status_aendret', 'sag.overdraget', 'sag.status_aendret'],
    };

    it('holds with one hand-over (received twice under its one id) and each step once', () => {
      const v = checkCaseSteps([handedOver], [{ caseId: 'c1', handOverId: 'h1' }, { caseId: 'c1', handOverId: 'h1' }], mails());
      assert.deepEqual([v.ok, v.measured], [true, '1 cases, 3 steps, 1 handed over']);
    });

    it('fails on a case handed over twice, and on a step written twice', () => {
      const v = checkCaseSteps([{ ...handedOver, eventTypes: [...handedOver.eventTypes, 'sag.overdraget'] }], [{ caseId: 'c1', handOverId: 'h1' }, { caseId: 'c1', handOverId: 'h2' }], mails());
      assert.deepEqual(v.problems, ['case c1: sag.overdraget 2 times', 'case c1 is handed over, and the partner got 2 hand-overs']);
    });

    it('fails on a hand-over day passed, a hand-over of a case not handed over, and a påkrav mailed twice', () => {
      const waiting: CaseFact = { id: 'c2', state: 'PAAKRAV_SENDT', handedOver: false, handOverDue: true, eventTypes: ['sag.oprettet', 'sag.paakrav_sendt'] };
      const twice = new Map([...mails('case-paakrav-c2'), ['case-paakrav-c2@other.invalid', 1]]);
      const v = checkCaseSteps([waiting], [{ caseId: 'c2', handOverId: 'h2' }], twice);
      assert.deepEqual(v.problems, [
        'case c2 is PAAKRAV_SENDT, and the partner got 1 hand-overs',
        'case c2: the hand-over day has passed and it is still PAAKRAV_SENDT',
        'case c2: its påkrav was mailed as 2 messages',
      ]);
    });
  });

  describe('subscription periods exactly once', () => {
    const sub: SubscriptionFact = {
      id: 's1', runs: [0, 1, 2], invoicesPerPeriod: new Map([['2030-01-01', 1], ['2030-01-08', 1], ['2030-01-15', 1]]),
      unissued: 0, periodsBehind: 0, mailedInvoices: ['i0', 'i1', 'i2'],
    };
    const sent = mails('i0.invoice', 'i1.invoice', 'i2.invoice');

    it('holds with periods 0…n−1 each run, invoiced and mailed once', () => {
      assert.deepEqual([checkSubscriptionPeriods([sub], sent).ok, checkSubscriptionPeriods([sub], sent).measured], [true, '1 subscriptions, 3 periods']);
    });

    it('fails on a period run twice, one skipped, one behind, and a period invoice mailed twice', () => {
      const v = checkSubscriptionPeriods(
        [{ ...sub, runs: [0, 2, 2], invoicesPerPeriod: new Map([['2030-01-01', 1], ['2030-01-15', 2]]), periodsBehind: 1 }],
        new Map([...sent, ['i1.invoice@other.invalid', 1]]),
      );
      assert.deepEqual(v.problems, [
        'subscription s1: periods 0,2,2 run, not 0…2 once each',
        'subscription s1: the period from 2030-01-15 has 2 invoices',
        'subscription s1: 3 runs but 2 periods invoiced',
        'subscription s1: 1 periods due and not run',
        'subscription s1: the invoice i1 was mailed as 2 messages',
      ]);
    });
  });

  it('invoice mails: one message per sent invoice; a queued send or a second message fails', () => {
    assert.equal(checkInvoiceMails([{ invoiceId: 'i1', status: 'sent' }], mails('i1.invoice')).ok, true);
    const v = checkInvoiceMails([{ invoiceId: 'i1', status: 'delivered' }, { invoiceId: 'i2', status: 'queued' }], new Map([...mails('i1.invoice'), ['i1.invoice@x.invalid', 1]]));
    assert.deepEqual(v.problems, ['invoice i1 was mailed as 2 messages', 'invoice i2: its mail is still queued']);
  });

  describe('number series without gaps', () => {
    it('holds for 1…n with the next number n + 1', () => {
      assert.equal(checkNumberSeries([{ organization: 'A', numbers: [3, 1, 2], nextNumber: 4 }]).ok, true);
    });

    it('fails on a gap, a number used twice and a next number that skips', () => {
      const v = checkNumberSeries([
        { organization: 'A', numbers: [1, 2, 4], nextNumber: 5 },
        { organization: 'B', numbers: [1, 2, 2], nextNumber: 3 },
        { organization: 'C', numbers: [1, 2], nextNumber: 4 },
      ]);
      assert.deepEqual(v.problems, ['A: numbers 3 missing', 'B: numbers 2 used twice', 'C: the next number is 4, the series ends at 2']);
    });
  });

  it('durable work left behind: a due or parked row fails, a row for later does not', () => {
    assert.equal(checkNothingLeft([{ service: 'Dunning', key: 'o:i', due: false, parked: false }]).ok, true);
    const v = checkNothingLeft([
      { service: 'Dunning', key: 'o:i', due: true, parked: false },
      { service: 'Case', key: 'o:c', due: true, parked: true },
    ]);
    assert.deepEqual([v.measured, v.problems], ['1 due, 1 parked, 0 waiting for later', ['Dunning o:i is due and not started', 'Case o:c is parked']]);
  });

  it('requests answered as the contract says: any refusal fails', () => {
    assert.equal(checkRefusals([]).ok, true);
    const v = checkRefusals(['payment drill-payment-7: 422 {"error":{"code":"invoice_not_issued"}}']);
    assert.deepEqual([v.ok, v.measured], [false, '1 refused']);
  });

  describe('longest API silence', () => {
    it('is the largest gap between answers, counting from the start and to the end of the load', () => {
      assert.deepEqual(longestSilence([1100, 1200, 4200, 4300], 1000, 5000), { ms: 3000, at: 1200 });
      assert.deepEqual(longestSilence([], 1000, 5000), { ms: 4000, at: 1000 });
      assert.deepEqual(longestSilence([1100], 1000, 5000), { ms: 3900, at: 1100 });
    });

    it('holds at 10 s and fails over it', () => {
      assert.equal(checkSilence([0, 10_000, 12_000], 0, 12_000, 10_000).ok, true);
      const v = checkSilence([0, 100, 10_201, 10_300], 0, 10_300, 10_000);
      assert.deepEqual([v.ok, v.measured, v.problems], [false, '10.1 s (at +0.1 s)', ['the API answered nothing for 10.1 s from 0.1 s into the load']]);
    });
  });

  describe('time to durable progress', () => {
    const kill = { what: 'Restate node', at: 10_000 };

    it('is the later of the first webhook and the first timed step begun after the kill', () => {
      const v = checkProgress(kill, [
        { kind: 'webhook', started: 9_000, at: 10_500 }, // begun before the kill: does not count
        { kind: 'webhook', started: 12_000, at: 14_000 },
        { kind: 'timed step', started: 21_000, at: 21_000 },
      ], 30_000);
      assert.deepEqual([v.ok, v.measured], [true, 'webhook 4.0 s, timed step 11.0 s']);
    });

    it('fails when work moved again only after 30 s, or never', () => {
      const late = checkProgress(kill, [{ kind: 'webhook', started: 11_000, at: 12_000 }, { kind: 'timed step', started: 40_100, at: 40_100 }], 30_000);
      assert.deepEqual(late.problems, ['durable work moved again only 30.1 s after the Restate node kill']);
      const never = checkProgress(kill, [{ kind: 'webhook', started: 11_000, at: 12_000 }], 30_000);
      assert.deepEqual([never.ok, never.problems], [false, ['no timed step begun after the Restate node kill finished']]);
    });
  });
});

/**
 * The drill's mixed load, through the public API while processes are killed under it:
 *
 * - the shop issues and sends an invoice every 0.5 s, and three payers pay them in five parts, about ten payments a
 *   second, every payment with an Idempotency-Key of its own, every fourth sent twice on purpose, each sent again
 *   with its key until answered; one more payment is cut off by the API kill (`holdPayment`) and sent again;
 * - the calendar issues and sends an invoice every 1.5 s (every fourth is paid at once) and advances its test clock
 *   every second, so that payment reminders, reminders, hand-overs to collection and subscription periods come due
 *   all through the run;
 * - a ping (`GET /v1`) every 100 ms, whose answers give the longest time the API answered nothing.
 */
import { request } from 'node:http';
import type { AcknowledgedPayment } from './checks.ts';
import type { DrillOrg } from './organisations.ts';

export interface LoadRecord {
  from: number;
  to: number;
  /** When each successful ping answered (ms). */
  pings: number[];
  acks: AcknowledgedPayment[];
  /** Payment keys that never got a 2xx answer. */
  unanswered: string[];
  /** Answers that were neither 2xx nor a reason to send again, one line each. */
  refused: string[];
  payments: number;
  /** Payments sent a second time with their key after a 2xx, on purpose. */
  deliberateRepeats: number;
  /** Payments sent again with their key after an attempt that got no answer of its own (a connection cut by a kill). */
  repeatsAfterNoAnswer: number;
  invoices: number;
  advances: number;
  businessDays: number;
}

interface Payable {
  org: DrillOrg;
  invoiceId: string;
  leftOere: number;
  parts: number;
  paymentDate: string;
}

export interface Load {
  record: LoadRecord;
  /**
   * Starts a payment on one API process directly (`processUrl`) and sends half of its body, so that a kill of that
   * process cuts it; the returned function, called after the kill, sends it again with its key through the public
   * address, as the client whose connection broke would.
   */
  holdPayment(processUrl: string): Promise<() => Promise<void>>;
  stop(): Promise<LoadRecord>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const lines = (n: number) => [
  { description: 'Rugbrød, 1 kg', quantity: 1 + (n % 7), unit: 'stk', unitPriceOere: 3500 + 100 * (n % 13) },
  { description: 'Levering', quantity: 1, unitPriceOere: 15_000, discount: { type: 'amount', value: 5000 } },
];

export function startLoad(orgs: { shop: DrillOrg; calendar: DrillOrg }, opts: { daysPerAdvance: number }): Load {
  const record: LoadRecord = {
    from: Date.now(),
    to: 0,
    pings: [],
    acks: [],
    unanswered: [],
    refused: [],
    payments: 0,
    deliberateRepeats: 0,
    repeatsAfterNoAnswer: 0,
    invoices: 0,
    advances: 0,
    businessDays: 0,
  };
  let running = true;
  const payable: Payable[] = [];
  let seq = 0;

  /** Runs `step` every `everyMs` (measured from start to start) until the load stops. */
  const every = async (everyMs: number, step: (n: number) => Promise<void>) => {
    for (let n = 1; running; n++) {
      const started = Date.now();
      await step(n);
      await sleep(Math.max(0, everyMs - (Date.now() - started)));
    }
  };

  const refused = (what: string, status: number | undefined, body: unknown) =>
    record.refused.push(`${what}: ${status === undefined ? 'no answer' : `${status} ${JSON.stringify(body).slice(0, 200)}`}`);

  const issue = async (org: DrillOrg, n: number): Promise<{ id: string; grossOere: number; issueDate: string } | undefined> => {
    const key = `drill-invoice-${org.organizationId.slice(0, 8)}-${n}`;
    const a = await org.api.untilAnswered('POST', '/v1/invoices?send=true', {
      idempotencyKey: key,
      body: { customerId: org.customers[n % org.customers.length], paymentTermsDays: 14, lines: lines(n), externalReference: key },
    });
    if (a?.status !== 201) {
      refused(`invoice ${key}`, a?.status, a?.body);
      return undefined;
    }
    record.invoices++;
    return a.body.data;
  };

  /** The next part of the oldest invoice with parts left: its key, amount and body. */
  const nextPayment = (): { p: Payable; n: number; key: string; amountOere: number; body: { amountOere: number; paymentDate: string } } | undefined => {
    const p = payable.shift();
    if (!p) return undefined;
    const amountOere = p.parts > 1 ? Math.ceil(p.leftOere / p.parts) : p.leftOere;
    if (p.parts > 1) payable.unshift({ ...p, leftOere: p.leftOere - amountOere, parts: p.parts - 1 });
    const n = ++seq;
    return { p, n, key: `drill-payment-${n}`, amountOere, body: { amountOere, paymentDate: p.paymentDate } };
  };

  /** Sends a payment until answered; records the acknowledgement. */
  const settlePayment = async (pay: NonNullable<ReturnType<typeof nextPayment>>, noAnswerBefore: boolean) => {
    const { p, n, key, amountOere, body } = pay;
    let noAnswer = noAnswerBefore;
    const send = () => p.org.api.untilAnswered('POST', `/v1/invoices/${p.invoiceId}/payments`, { idempotencyKey: key, body, onNoAnswer: () => (noAnswer = true) });
    const a = await send();
    record.payments++;
    if (noAnswer && a) record.repeatsAfterNoAnswer++;
    if (!a || a.status !== 201) {
      if (a) refused(`payment ${key}`, a.status, a.body);
      else record.unanswered.push(key);
      return;
    }
    record.acks.push({ key, paymentId: a.body.meta.paymentId, amountOere });
    if (n % 4 === 0) {
      // The same payment again, as a client that did not trust its first answer: it must be the same payment.
      const again = await send();
      record.deliberateRepeats++;
      if (again?.status === 201) record.acks.push({ key, paymentId: again.body.meta.paymentId, amountOere });
      else refused(`repeated payment ${key}`, again?.status, again?.body);
    }
  };

  const ping = async () => {
    for (; running; await sleep(100)) {
      void orgs.shop.api.once('GET', '/v1', { timeoutMs: 2000 }).then(
        (a) => void (a.status === 200 && record.pings.push(Date.now())),
        () => {},
      );
    }
  };

  /** Pays one part every 300 ms while the load runs, then what is left. */
  const payer = async () => {
    while (running || payable.length > 0) {
      const started = Date.now();
      const pay = nextPayment();
      if (pay) await settlePayment(pay, false);
      if (running) await sleep(Math.max(0, 300 - (Date.now() - started)));
    }
  };

  const advance = async (n: number) => {
    const a = await orgs.calendar.api.untilAnswered('POST', '/v1/test-clock/advance', { idempotencyKey: `drill-clock-${n}`, body: { days: opts.daysPerAdvance } });
    if (a?.status === 200) {
      record.advances++;
      record.businessDays += opts.daysPerAdvance;
    } else refused(`clock advance ${n}`, a?.status, a?.body);
  };

  const streams = [
    ping(),
    payer(),
    payer(),
    payer(),
    every(500, async (n) => {
      const inv = await issue(orgs.shop, n);
      if (inv) payable.push({ org: orgs.shop, invoiceId: inv.id, leftOere: inv.grossOere, parts: 5, paymentDate: inv.issueDate });
    }),
    every(1500, async (n) => {
      const inv = await issue(orgs.calendar, n);
      if (inv && n % 4 === 0) payable.push({ org: orgs.calendar, invoiceId: inv.id, leftOere: inv.grossOere, parts: 1, paymentDate: inv.issueDate });
    }),
    every(1000, advance),
  ];

  return {
    record,
    async holdPayment(processUrl) {
      let pay = nextPayment();
      while (!pay) {
        await sleep(50);
        pay = nextPayment();
      }
      const held = pay;
      const body = JSON.stringify(held.body);
      const req = request(`${processUrl}/v1/invoices/${held.p.invoiceId}/payments`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${held.p.org.api.key}`,
          'idempotency-key': held.key,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      });
      const cut = new Promise<void>((r) => {
        req.once('error', () => r());
        req.once('response', (res) => {
          res.resume();
          r();
        });
      });
      await new Promise<void>((r) => req.write(body.slice(0, body.length >> 1), () => r()));
      return async () => {
        await cut;
        await settlePayment(held, true);
      };
    },
    async stop() {
      running = false;
      record.to = Date.now();
      await Promise.all(streams);
      return record;
    },
  };
}

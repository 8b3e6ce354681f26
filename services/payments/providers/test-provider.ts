import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import Handlebars from 'handlebars';
import { randomBytesPooled } from '../../shared/crypto.ts';
import { formatOere } from '../../shared/money.ts';
import {
  InvalidProviderEvent,
  type CheckoutRequest,
  type CheckoutSession,
  type PaymentMethod,
  type PaymentProvider,
  type ProviderCallback,
  type ProviderEvent,
} from './provider.ts';

/**
 * The `test` payment provider: behaves like a real card acquirer or wallet in test mode, so the whole pay flow runs
 * on one machine with no account anywhere. Two halves, kept apart as they would be in reality:
 *
 * - the adapter (`provider`), which is all the pay service uses: createCheckout, verifyCallback, parseEvent;
 * - the provider's own side (`routes`): a hosted checkout page under `/test-provider/` where the customer approves,
 *   declines or cancels (no card number or wallet is asked for: nothing is charged), and the delivery of signed
 *   events to the callback URL.
 *
 * Like real providers, it delivers events at least once and in no guaranteed order: on approval it delivers
 * `payment.succeeded`, then the checkout's earlier `payment.failed` events again (late, so out of order), then
 * `payment.succeeded` once more (a duplicate). The receiving side must book once and never let a late failure undo a
 * payment. A delivery that fails is retried in the background a few times.
 *
 * Signatures: header `Test-Provider-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` with the
 * shared secret; a signature older or newer than five minutes is refused (replay protection). Checkout sessions
 * are stateless: the checkout URL carries the session, MAC'd with the same secret, so nothing on the provider's
 * side is lost when the process restarts.
 */

export const TEST_PROVIDER = 'test';
export const SIGNATURE_HEADER = 'test-provider-signature';
export const SIGNATURE_TOLERANCE_S = 300;
const SESSION_TTL_MS = 30 * 60 * 1000;

export interface TestProviderOptions {
  /** The shared secret: signs checkout URLs and callbacks. */
  secret: Buffer;
  /** Where the provider's own pages are served, e.g. http://127.0.0.1:3001/test-provider. */
  baseUrl: string;
  /** Seconds since the epoch; tests pass their own. */
  now?: () => number;
  /** Problems delivering callbacks (they are retried) are reported here. */
  log?: (msg: string, fields: Record<string, unknown>) => void;
  /** Background redelivery delays after the immediate attempts fail (default 2 s, 10 s, 60 s). */
  retryDelaysMs?: number[];
}

/** The provider's event as it travels. */
export interface TestProviderEventBody {
  id: string;
  type: 'payment.succeeded' | 'payment.failed';
  created: number;
  data: {
    session: string;
    client_reference: string;
    payment: string;
    amount: number;
    currency: string;
    method: PaymentMethod;
    failure_reason?: string;
  };
}

/** What the checkout URL carries (MAC'd): everything the provider's page needs. */
interface SessionToken {
  sid: string;
  ref: string;
  amt: number;
  cur: string;
  mth: PaymentMethod;
  lang: 'da' | 'en';
  mer: string;
  desc: string;
  ret: string;
  can: string;
  cb: string;
  exp: number;
}

const hmacHex = (secret: Buffer, text: string): string => createHmac('sha256', secret).update(text).digest('hex');

/** The signature header a callback with this body carries at time `t`. */
export function signTestCallback(secret: Buffer, body: string | Buffer, t: number): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex')}`;
}

export function verifyTestSignature(secret: Buffer, header: string | undefined, rawBody: Buffer, nowS: number): boolean {
  if (!header || header.length > 1000) return false;
  let t: number | undefined;
  const candidates: Buffer[] = [];
  for (const part of header.split(',')) {
    const [k, v] = part.trim().split('=', 2) as [string, string | undefined];
    if (k === 't' && v && /^\d{1,12}$/.test(v)) t = Number(v);
    else if (k === 'v1' && v && /^[0-9a-f]{64}$/.test(v)) candidates.push(Buffer.from(v, 'hex'));
  }
  if (t === undefined || candidates.length === 0 || Math.abs(nowS - t) > SIGNATURE_TOLERANCE_S) return false;
  const expected = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest();
  // Every candidate is compared (several v1 entries appear while a secret is rotated).
  let ok = false;
  for (const c of candidates) if (timingSafeEqual(c, expected)) ok = true;
  return ok;
}

const str = (v: unknown, max = 200): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;

export function parseTestEvent(rawBody: Buffer): ProviderEvent {
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new InvalidProviderEvent('the body is not JSON');
  }
  const e = body as Partial<TestProviderEventBody> | null;
  if (!e || typeof e !== 'object' || !str(e.id) || !str(e.type) || !Number.isSafeInteger(e.created)) throw new InvalidProviderEvent('not an event');
  if (e.type !== 'payment.succeeded' && e.type !== 'payment.failed') return { kind: 'ignored', eventId: e.id, type: e.type };
  const d = e.data;
  if (!d || typeof d !== 'object' || !str(d.session) || !str(d.client_reference) || !str(d.payment) || !str(d.currency, 3)) {
    throw new InvalidProviderEvent('the event lacks its session, reference, payment or currency');
  }
  if (d.method !== 'card' && d.method !== 'mobilepay') throw new InvalidProviderEvent('unknown payment method');
  if (!Number.isSafeInteger(d.amount) || d.amount < 1) throw new InvalidProviderEvent('the amount is not a positive whole number of øre');
  const base = { eventId: e.id, clientReference: d.client_reference, providerSessionId: d.session, occurredAt: new Date(e.created! * 1000) };
  if (e.type === 'payment.succeeded') {
    return { ...base, kind: 'payment_succeeded', providerPaymentId: d.payment, amountOere: d.amount, currency: d.currency, method: d.method };
  }
  return { ...base, kind: 'payment_failed', providerPaymentId: d.payment, method: d.method, reason: str(d.failure_reason) ? d.failure_reason : 'failed' };
}

export interface TestProvider {
  provider: PaymentProvider;
  /** Mounts the provider's own pages (under /test-provider) on a Fastify instance. */
  routes: (app: FastifyInstance) => void;
  /** Resolves when every background redelivery has finished or given up (tests, shutdown). */
  idle(): Promise<void>;
  close(): void;
}

export function createTestProvider(opts: TestProviderOptions): TestProvider {
  const secret = opts.secret;
  const base = opts.baseUrl.replace(/\/+$/, '');
  const now = opts.now ?? (() => Math.floor(Date.now() / 1000));
  const log = opts.log ?? (() => {});
  const retryDelays = opts.retryDelaysMs ?? [2000, 10_000, 60_000];
  // Failed attempts per checkout, redelivered (late) when the checkout is approved. Test-mode only state: a lost
  // entry only means one fewer out-of-order redelivery.
  const failedBySession = new Map<string, TestProviderEventBody[]>();
  const pending = new Set<Promise<void>>();
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;

  const tokenFor = (s: SessionToken): string => {
    const payload = Buffer.from(JSON.stringify(s)).toString('base64url');
    return `${payload}.${hmacHex(secret, `checkout-token.${payload}`).slice(0, 43)}`;
  };
  const readToken = (token: string): SessionToken | undefined => {
    const [payload, mac] = token.split('.', 2);
    if (!payload || !mac || token.length > 8000) return undefined;
    const expected = Buffer.from(hmacHex(secret, `checkout-token.${payload}`).slice(0, 43));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as SessionToken;
    } catch {
      return undefined;
    }
  };

  const provider: PaymentProvider = {
    name: TEST_PROVIDER,
    checkoutOrigins: [new URL(base).origin],
    async createCheckout(req: CheckoutRequest): Promise<CheckoutSession> {
      if (!Number.isSafeInteger(req.amountOere) || req.amountOere < 1) throw new RangeError('a checkout needs a positive amount');
      const sid = `tcs_${randomBytesPooled(12).toString('hex')}`;
      const exp = now() + SESSION_TTL_MS / 1000;
      const token = tokenFor({
        sid, ref: req.clientReference, amt: req.amountOere, cur: req.currency, mth: req.method, lang: req.language,
        mer: req.merchantName, desc: req.description, ret: req.returnUrl, can: req.cancelUrl, cb: req.callbackUrl, exp,
      });
      return { providerSessionId: sid, url: `${base}/checkout/${token}`, expiresAt: new Date(exp * 1000) };
    },
    verifyCallback(cb: ProviderCallback): boolean {
      const h = cb.headers[SIGNATURE_HEADER];
      return verifyTestSignature(secret, Array.isArray(h) ? h[0] : h, cb.rawBody, now());
    },
    parseEvent: parseTestEvent,
  };

  async function post(url: string, event: TestProviderEventBody): Promise<boolean> {
    const body = JSON.stringify(event);
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signTestCallback(secret, body, now()) },
        body,
        signal: AbortSignal.timeout(10_000),
        redirect: 'manual',
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) return true;
      log('callback refused', { url, eventId: event.id, status: res.status });
      return false;
    } catch (err) {
      log('callback failed', { url, eventId: event.id, err: String(err) });
      return false;
    }
  }

  /** One delivery now; when it fails, a few more in the background (as a real provider keeps retrying). */
  async function deliver(url: string, event: TestProviderEventBody): Promise<void> {
    if (await post(url, event)) return;
    const retry = (i: number): void => {
      if (closed || i >= retryDelays.length) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        const p = post(url, event).then((ok) => (ok ? undefined : retry(i + 1)));
        pending.add(p);
        void p.finally(() => pending.delete(p));
      }, retryDelays[i]);
      timer.unref();
      timers.add(timer);
    };
    retry(0);
  }

  const event = (s: SessionToken, type: TestProviderEventBody['type'], payment: string, extra: Partial<TestProviderEventBody['data']> = {}): TestProviderEventBody => ({
    // Event ids are fixed per payment and type: a redelivery carries the same id.
    id: `tevt_${hmacHex(secret, `event.${payment}.${type}`).slice(0, 24)}`,
    type,
    created: now(),
    data: { session: s.sid, client_reference: s.ref, payment, amount: s.amt, currency: s.cur, method: s.mth, ...extra },
  });

  function routes(app: FastifyInstance): void {
    const page = (reply: FastifyReply, status: number, model: PageModel) =>
      reply
        .code(status)
        .type('text/html; charset=utf-8')
        .header('Cache-Control', 'no-store')
        .header('Referrer-Policy', 'no-referrer')
        .header('X-Content-Type-Options', 'nosniff')
        .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http: https:; frame-ancestors 'none'; base-uri 'none'")
        .send(checkoutPage(model));

    const session = (token: string): SessionToken | 'expired' | undefined => {
      const s = readToken(token);
      if (!s) return undefined;
      return s.exp < now() ? 'expired' : s;
    };

    app.get<{ Params: { token: string }; Querystring: { declined?: string } }>('/test-provider/checkout/:token', async (req, reply) => {
      const s = session(req.params.token);
      if (!s) return page(reply, 404, { lang: 'en', notFound: true });
      if (s === 'expired') return page(reply, 410, { lang: 'en', expired: true });
      return page(reply, 200, viewOf(s, req.params.token, req.query.declined === '1'));
    });

    app.post<{ Params: { token: string }; Body: Record<string, string> | undefined }>('/test-provider/checkout/:token', async (req, reply) => {
      const s = session(req.params.token);
      if (!s) return page(reply, 404, { lang: 'en', notFound: true });
      if (s === 'expired') return page(reply, 410, { lang: 'en', expired: true });
      const outcome = req.body?.outcome;
      if (outcome === 'cancel') return reply.redirect(s.can, 303);
      if (outcome === 'decline') {
        const failed = event(s, 'payment.failed', `tpay_${randomBytesPooled(12).toString('hex')}`, {
          failure_reason: s.mth === 'card' ? 'card_declined' : 'rejected_by_user',
        });
        failedBySession.set(s.sid, [...(failedBySession.get(s.sid) ?? []), failed].slice(-10));
        await deliver(s.cb, failed);
        return reply.redirect(`${base}/checkout/${req.params.token}?declined=1`, 303);
      }
      if (outcome !== 'approve') return page(reply, 400, viewOf(s, req.params.token, false));
      // One successful payment per checkout: approving twice (a double click, a reload) reports the same payment.
      const paymentId = `tpay_${hmacHex(secret, `payment.${s.sid}`).slice(0, 24)}`;
      const succeeded = event(s, 'payment.succeeded', paymentId);
      await deliver(s.cb, succeeded);
      for (const late of failedBySession.get(s.sid) ?? []) await deliver(s.cb, late);
      failedBySession.delete(s.sid);
      await deliver(s.cb, succeeded);
      return reply.redirect(s.ret, 303);
    });
  }

  return {
    provider,
    routes,
    async idle() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The provider's checkout page: its own look, clearly marked as test mode.

interface PageModel {
  lang: 'da' | 'en';
  notFound?: boolean;
  expired?: boolean;
  merchant?: string;
  description?: string;
  amount?: string;
  method?: string;
  action?: string;
  declined?: boolean;
}

const PAGE_TEXT = {
  da: {
    title: 'Testbetaling',
    banner: 'Testtilstand: der trækkes ingen penge.',
    payTo: 'Betaling til',
    amount: 'Beløb',
    method: 'Betalingsmåde',
    approve: 'Godkend betaling',
    decline: 'Afvis betaling',
    cancel: 'Annuller og gå tilbage',
    declined: 'Betalingen blev afvist. Prøv igen, eller annuller.',
    notFound: 'Denne betaling findes ikke.',
    expired: 'Denne betaling er udløbet. Gå tilbage og start betalingen igen.',
    card: 'Kort',
    mobilepay: 'MobilePay',
  },
  en: {
    title: 'Test payment',
    banner: 'Test mode: no money moves.',
    payTo: 'Payment to',
    amount: 'Amount',
    method: 'Payment method',
    approve: 'Approve payment',
    decline: 'Decline payment',
    cancel: 'Cancel and go back',
    declined: 'The payment was declined. Try again, or cancel.',
    notFound: 'This payment does not exist.',
    expired: 'This payment has expired. Go back and start the payment again.',
    card: 'Card',
    mobilepay: 'MobilePay',
  },
} as const;


const viewOf = (s: SessionToken, token: string, declined: boolean): PageModel => ({
  lang: s.lang,
  merchant: s.mer,
  description: s.desc,
  amount: formatOere(s.amt, s.lang),
  method: PAGE_TEXT[s.lang][s.mth],
  action: `/test-provider/checkout/${token}`,
  declined,
});

const checkoutTemplate = Handlebars.create().compile<PageModel & { t: (typeof PAGE_TEXT)['da' | 'en'] }>(
  `<!doctype html>
<html lang="{{lang}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{t.title}}</title>
<style>
  body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: #1b1b1b; background: #f1f0ec; }
  .banner { background: #7a3e00; color: #fff; padding: .5rem 1rem; text-align: center; font-weight: 600; }
  main { max-width: 26rem; margin: 2rem auto; background: #fff; border: 1px solid #c9c6bd; border-radius: 8px; padding: 1.5rem; }
  h1 { font-size: 1.3rem; margin: 0 0 1rem; }
  dl { display: grid; grid-template-columns: auto 1fr; gap: .25rem 1rem; margin: 0 0 1.5rem; }
  dt { color: #4a4a4a; } dd { margin: 0; font-weight: 600; }
  button { display: block; width: 100%; margin: .5rem 0; padding: .8rem; font: inherit; font-weight: 600; border-radius: 6px; cursor: pointer; }
  .approve { background: #1f5f2c; color: #fff; border: 2px solid #1f5f2c; }
  .decline { background: #fff; color: #8c1d18; border: 2px solid #8c1d18; }
  .cancel { background: #fff; color: #1b1b1b; border: 2px solid #6b6b6b; }
  button:focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
  .alert { border-left: 4px solid #8c1d18; background: #fbeaea; padding: .5rem .75rem; margin-bottom: 1rem; }
</style>
</head>
<body>
<div class="banner">{{t.banner}}</div>
<main>
  <h1>{{t.title}}</h1>
  {{#if notFound}}<p role="alert">{{t.notFound}}</p>{{/if}}
  {{#if expired}}<p role="alert">{{t.expired}}</p>{{/if}}
  {{#if action}}
  {{#if declined}}<p class="alert" role="alert">{{t.declined}}</p>{{/if}}
  <dl>
    <dt>{{t.payTo}}</dt><dd>{{merchant}}</dd>
    <dt>{{t.amount}}</dt><dd data-testid="provider-amount">{{amount}}</dd>
    <dt>{{t.method}}</dt><dd>{{method}}</dd>
  </dl>
  <p>{{description}}</p>
  <form method="post" action="{{action}}">
    <button class="approve" type="submit" name="outcome" value="approve">{{t.approve}}</button>
    <button class="decline" type="submit" name="outcome" value="decline">{{t.decline}}</button>
    <button class="cancel" type="submit" name="outcome" value="cancel">{{t.cancel}}</button>
  </form>
  {{/if}}
</main>
</body>
</html>
`,
  { strict: false },
);

function checkoutPage(model: PageModel): string {
  return checkoutTemplate({ ...model, t: PAGE_TEXT[model.lang] });
}

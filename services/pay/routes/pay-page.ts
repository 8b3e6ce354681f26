import type { FastifyInstance } from 'fastify';
import { checkoutStatus, loadPayView, startCheckout, type CheckoutDeps } from '../../payments/checkout.ts';
import type { Db } from '../../shared/db.ts';
import type { LookupLimiter } from '../lookup-limiter.ts';
import { lookUpPaymentCode } from '../look-up-payment-code.ts';
import { payPageLanguage, type PayPages } from '../pay-page-views.ts';
import { TEXTS } from '../texts.ts';

export interface PayPageDeps {
  db: Db;
  pages: PayPages;
  limiter: LookupLimiter;
  checkout: CheckoutDeps;
}

type Form = Record<string, string> | undefined;

/**
 * The hosted pay page: `GET /` (enter a code), `POST /code`, `GET /p/{reference}` (the invoice and its balance read
 * now), `POST /p/{reference}/checkout` (on to the provider for that balance), `GET /p/{reference}/return` (back from
 * the provider). Forms answer with a redirect (303), so a reload never posts twice.
 */
export function payPageRoutes(app: FastifyInstance, deps: PayPageDeps): void {
  const { db, pages } = deps;

  app.get('/', async (req, reply) => pages.code(reply, 200, payPageLanguage(req), '', null));

  app.post<{ Body: Form }>('/code', async (req, reply) => {
    const lang = payPageLanguage(req);
    const t = TEXTS[lang];
    const typed = String(req.body?.code ?? '').slice(0, 40);
    const found = await lookUpPaymentCode(db, deps.limiter, typed, req.ip);
    switch (found.kind) {
      case 'invalid':
        return pages.code(reply, 400, lang, typed, t.codeInvalid);
      case 'limited':
        reply.header('Retry-After', String(found.retryAfterSeconds));
        return pages.code(reply, 429, lang, typed, t.codeLimited(found.retryAfterSeconds));
      case 'unknown':
        return pages.code(reply, 404, lang, typed, t.codeUnknown);
      case 'found':
        return reply.redirect(`/p/${found.reference}?lang=${lang}`, 303);
    }
  });

  app.get<{ Params: { reference: string } }>('/p/:reference', async (req, reply) => {
    const view = await db.read((sql) => loadPayView(sql, { reference: req.params.reference }));
    if (!view) return pages.notFound(reply, payPageLanguage(req));
    return pages.invoice(reply, view, payPageLanguage(req, view.customerLanguage));
  });

  app.post<{ Params: { reference: string }; Body: Form }>('/p/:reference/checkout', async (req, reply) => {
    const { reference } = req.params;
    const lang = payPageLanguage(req);
    const method = req.body?.method;
    if (method !== 'card' && method !== 'mobilepay') return reply.redirect(`/p/${reference}?lang=${lang}`, 303);
    let started;
    try {
      started = await startCheckout(deps.checkout, reference, method, lang);
    } catch (err) {
      req.log.error({ err }, 'the payment provider could not open a checkout');
      const view = await db.read((sql) => loadPayView(sql, { reference }));
      if (!view) throw err;
      return pages.invoice(reply, view, lang, TEXTS[lang].providerUnavailable, 502);
    }
    if (started.kind === 'unknown_link') return pages.notFound(reply, lang);
    // Paid meanwhile: back to the invoice, which now says so.
    if (started.kind === 'nothing_to_pay') return reply.redirect(`/p/${reference}?lang=${lang}`, 303);
    return reply.redirect(started.url, 303);
  });

  app.get<{ Params: { reference: string }; Querystring: { session?: string; lang?: string } }>('/p/:reference/return', async (req, reply) => {
    const { reference } = req.params;
    const [view, status] = await db.read(async (sql) => [
      await loadPayView(sql, { reference }),
      await checkoutStatus(sql, reference, String(req.query.session ?? '')),
    ] as const);
    const lang = payPageLanguage(req, view?.customerLanguage);
    if (!view || !status) return pages.notFound(reply, lang);
    return pages.returned(reply, view, status, String(req.query.session), lang);
  });
}

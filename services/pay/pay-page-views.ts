import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CheckoutStatus, PayView } from '../payments/checkout.ts';
import { CHECKOUT_LIFECYCLE } from '../payments/checkout-lifecycle.ts';
import { formatOere } from '../shared/money.ts';
import { renderPage, type LayoutInput } from './pages.ts';
import { sendHtmlPage } from './plugins/page-policy.ts';
import { formatDate, pickLanguage, TEXTS, type Language } from './texts.ts';

/** Seconds between reloads of the return page while the provider's confirmation is on its way. */
const PROCESSING_REFRESH_S = 2;

/** The language of a pay page: the form's or the query's `lang`, else the browser's, else the fallback (the customer's). */
export function payPageLanguage(req: FastifyRequest, fallback?: Language): Language {
  const q = req.query as Record<string, unknown> | undefined;
  const b = req.body as Record<string, unknown> | undefined;
  return pickLanguage(b?.lang ?? q?.lang, req.headers['accept-language'], fallback);
}

const switchHref = (path: string, lang: Language): string => `${path}${path.includes('?') ? '&' : '?'}lang=${TEXTS[lang].otherLanguage.code}`;

/** The pay page's pages, each sent under the page's Content-Security-Policy (which names the provider's checkout). */
export interface PayPages {
  /** A page that says what went wrong (not found, or anything else) and leads back to the code page. */
  message(reply: FastifyReply, status: number, lang: Language): FastifyReply;
  notFound(reply: FastifyReply, lang: Language): FastifyReply;
  code(reply: FastifyReply, status: number, lang: Language, code: string, error: string | null): FastifyReply;
  invoice(reply: FastifyReply, view: PayView, lang: Language, notice?: string | null, status?: number): FastifyReply;
  /** Where the provider sends the customer back: paid, failed, or still waiting for the provider's word (reloads). */
  returned(reply: FastifyReply, view: PayView, status: CheckoutStatus, session: string, lang: Language): FastifyReply;
}

export function createPayPages(csp: string): PayPages {
  const html = (reply: FastifyReply, status: number, body: string): FastifyReply => sendHtmlPage(reply, status, body, csp);
  const serviceLayout = (lang: Language, title: string, path: string): LayoutInput => ({
    lang, title, brand: TEXTS[lang].serviceName, switchHref: switchHref(path, lang),
  });
  const logoOf = (view: PayView) => (view.logoSha256 ? `/p/${view.reference}/logo/${view.logoSha256}` : null);

  const message = (reply: FastifyReply, status: number, lang: Language) => {
    const t = TEXTS[lang];
    const [title, text] = status === 404 ? [t.notFoundTitle, t.notFoundText] : [t.errorTitle, t.errorText];
    return html(reply, status, renderPage('message', serviceLayout(lang, title, '/'), {
      heading: title, text, linkHref: `/?lang=${lang}`, linkText: t.goToCode,
    }));
  };

  return {
    message,
    notFound: (reply, lang) => message(reply, 404, lang),

    code: (reply, status, lang, code, error) =>
      html(reply, status, renderPage('code', serviceLayout(lang, TEXTS[lang].codeTitle, '/'), { code, error })),

    invoice(reply, view, lang, notice = null, status = 200) {
      const t = TEXTS[lang];
      const path = `/p/${view.reference}`;
      return html(reply, status, renderPage('invoice', {
        lang, title: t.invoiceTitle(view.invoiceNumber), brand: view.creditorName, switchHref: switchHref(path, lang), logoSrc: logoOf(view),
      }, {
        heading: t.invoiceTitle(view.invoiceNumber),
        notice,
        creditor: view.creditorName,
        invoiceNumber: String(view.invoiceNumber),
        dueDate: view.dueDate ? formatDate(view.dueDate, lang) : t.noDueDate,
        total: formatOere(view.grossOere, lang),
        balance: formatOere(Math.max(0, view.balanceOere), lang),
        payable: view.balanceOere > 0,
        checkoutAction: `${path}/checkout`,
        settledText: view.balanceOere < 0 ? `${t.nothingToPay} ${t.creditBalance(formatOere(-view.balanceOere, lang))}` : t.nothingToPay,
      }));
    },

    returned(reply, view, status, session, lang) {
      const t = TEXTS[lang];
      const path = `/p/${view.reference}`;
      const layout = (title: string, refresh?: number): LayoutInput => ({
        lang, title, brand: view.creditorName, switchHref: switchHref(`${path}/return?session=${encodeURIComponent(session)}`, lang),
        logoSrc: logoOf(view),
        ...(refresh ? { refreshSeconds: refresh } : {}),
      });
      if (status.status === CHECKOUT_LIFECYCLE.state.succeeded) {
        const lines = [
          t.returnSucceededText(formatOere(status.paidOere ?? status.amountOere, lang), view.invoiceNumber),
          view.balanceOere > 0 ? t.returnRemaining(formatOere(view.balanceOere, lang)) : t.returnPaidInFull,
        ];
        return html(reply, 200, renderPage('return', layout(t.returnSucceeded), {
          heading: t.returnSucceeded, lines, tryAgainHref: null, backHref: `${path}?lang=${lang}`,
        }));
      }
      if (status.status === CHECKOUT_LIFECYCLE.state.failed) {
        return html(reply, 200, renderPage('return', layout(t.returnFailed), {
          heading: t.returnFailed, lines: [t.returnFailedText], tryAgainHref: `${path}?lang=${lang}`, backHref: null,
        }));
      }
      return html(reply, 200, renderPage('return', layout(t.returnProcessing, PROCESSING_REFRESH_S), {
        heading: t.returnProcessing, lines: [t.returnProcessingText], tryAgainHref: null, backHref: `${path}?lang=${lang}`,
      }));
    },
  };
}

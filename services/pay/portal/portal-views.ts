import type { FastifyReply } from 'fastify';
import { INVOICE_STATUS } from '../../invoices/invoice-lifecycle.ts';
import { formatOere } from '../../shared/money.ts';
import { canSubscription, type SubscriptionStatus } from '../../subscriptions/subscription-lifecycle.ts';
import { pageCsp, sendHtmlPage } from '../plugins/page-policy.ts';
import { formatDate, type Language } from '../texts.ts';
import { PORTAL_SUBSCRIPTION_ACTIONS, type PortalSubscriptionAction } from './change-portal-subscription.ts';
import type { Portal } from './find-portal.ts';
import type { CustomerOverview } from './load-portal-overview.ts';
import { portalInvoiceStatus } from './portal-invoice.ts';
import { homeOf, withLang } from './portal-context.ts';
import { renderPortalPage, type CustomerSection, type InvoiceItem, type PortalLayout } from './portal-pages.ts';
import { PORTAL_TEXTS } from './portal-texts.ts';

const CSP = pageCsp();

const html = (reply: FastifyReply, status: number, body: string): FastifyReply => sendHtmlPage(reply, status, body, CSP);

/**
 * The layout of a portal page. A signed-in page has the sign-out form, with a CSRF token of the session's
 * (portal-csrf.ts, reply.generateCsrf).
 */
function layoutOf(reply: FastifyReply, base: string, portal: Portal | undefined, lang: Language, title: string, signedIn = false): PortalLayout {
  const t = PORTAL_TEXTS[lang];
  return {
    lang,
    title,
    orgName: portal?.organizationName ?? t.portalName,
    showService: portal !== undefined,
    palette: portal?.palette ?? 'lys',
    logoSrc: portal?.logoSha256 ? `${base}/logo/${portal.logoSha256}` : null,
    cssHref: `${base}/portal.css`,
    themeHref: `${base}/theme.css`,
    switchHref: `${homeOf(base)}?lang=${t.otherLanguage.code}`,
    signOut: signedIn ? { action: `${base}/sign-out`, csrf: reply.generateCsrf() } : null,
  };
}

export function messagePage(
  reply: FastifyReply, status: number, base: string, portal: Portal | undefined, lang: Language,
  heading: string, text: string, link: { href: string; text: string } | null,
): FastifyReply {
  return html(reply, status, renderPortalPage('portal-message', layoutOf(reply, base, portal, lang, heading), {
    heading, text, linkHref: link?.href ?? null, linkText: link?.text ?? '',
  }));
}

/** The same page for an unknown and an inactive portal: nothing tells them apart. */
export function notFoundPage(reply: FastifyReply, base: string, lang: Language): FastifyReply {
  const t = PORTAL_TEXTS[lang];
  return messagePage(reply, 404, base, undefined, lang, t.notFoundTitle, t.notFoundText, null);
}

export function signInPage(
  reply: FastifyReply, status: number, base: string, portal: Portal, lang: Language,
  opts: { notice?: string | null; email?: string; error?: string | null } = {},
): FastifyReply {
  const t = PORTAL_TEXTS[lang];
  return html(reply, status, renderPortalPage('portal-sign-in', layoutOf(reply, base, portal, lang, t.signInTitle), {
    notice: opts.notice ?? null, intro: t.signInIntro(portal.organizationName), action: `${base}/sign-in`,
    email: opts.email ?? '', error: opts.error ?? null,
  }));
}

/** The confirmation page of a sign-in link: one button, whose form carries the login-CSRF token (portal-tokens.ts). */
export function confirmPage(reply: FastifyReply, base: string, portal: Portal, lang: Language, token: string, confirm: string): FastifyReply {
  const t = PORTAL_TEXTS[lang];
  return html(reply, 200, renderPortalPage('portal-confirm', layoutOf(reply, base, portal, lang, t.confirmTitle), {
    text: t.confirmText(portal.organizationName), action: `${base}/sign-in/${token}`, confirm,
  }));
}

/** A link that is spent, expired, unknown or not a token at all: one answer for all, leading to a new link. */
export function linkRefusedPage(reply: FastifyReply, base: string, portal: Portal, lang: Language): FastifyReply {
  const t = PORTAL_TEXTS[lang];
  return messagePage(reply, 410, base, portal, lang, t.linkInvalidTitle, t.linkInvalidText, { href: withLang(homeOf(base), lang), text: t.requestNewLink });
}

/** A form without the session's CSRF token (an old page, or another site's form). */
export function csrfRefusedPage(reply: FastifyReply, base: string, portal: Portal, lang: Language): FastifyReply {
  const t = PORTAL_TEXTS[lang];
  return messagePage(reply, 403, base, portal, lang, t.errorTitle, t.csrfRefused, { href: withLang(homeOf(base), lang), text: t.homeTitle });
}

/** The signed-in debtor's page: each customer's balance, open and paid invoices and, with self-service, subscriptions. */
export function homePage(
  reply: FastifyReply, base: string, portal: Portal, overview: CustomerOverview[], lang: Language, notice: string | null, status = 200,
): FastifyReply {
  const t = PORTAL_TEXTS[lang];
  return html(reply, status, renderPortalPage('portal-home', layoutOf(reply, base, portal, lang, t.homeTitle, true), {
    notice,
    csrf: reply.generateCsrf(),
    selfService: portal.subscriptionSelfService,
    showCustomerNames: overview.length > 1,
    customers: overview.map((o) => sectionOf(o, base, lang)),
  }));
}

function sectionOf(o: CustomerOverview, base: string, lang: Language): CustomerSection {
  const t = PORTAL_TEXTS[lang];
  const item = (inv: CustomerOverview['open'][number]): InvoiceItem => ({
    number: inv.number!,
    heading: t.invoiceHeading(inv.number!),
    issueDate: inv.issueDate ? formatDate(inv.issueDate, lang) : '',
    dueDate: inv.dueDate ? formatDate(inv.dueDate, lang) : t.noDueDate,
    total: formatOere(inv.grossOere, lang),
    balance: formatOere(inv.balanceOere, lang),
    status: t.statusText[portalInvoiceStatus(inv, o.balance.asOf)] ?? inv.status,
    pdfHref: `${base}/invoices/${inv.id}/pdf`,
    pdfLabel: t.downloadPdf(inv.number!),
    payHref: inv.status !== INVOICE_STATUS.paid && inv.balanceOere > 0 ? `${base}/invoices/${inv.id}/pay` : null,
    payLabel: t.pay(inv.number!),
    payShort: t.payShort,
  });
  // What the subscription's status allows, in the order the page shows them: active → pause, cancel; paused → resume, cancel.
  const actionsOf = (status: SubscriptionStatus): PortalSubscriptionAction[] => PORTAL_SUBSCRIPTION_ACTIONS.filter((a) => canSubscription(status, a));
  return {
    name: o.customer.name,
    outstanding: formatOere(o.balance.outstandingOere, lang),
    overdue: formatOere(o.balance.overdueOere, lang),
    credit: o.balance.creditOere > 0 ? formatOere(o.balance.creditOere, lang) : null,
    open: o.open.map(item),
    paid: o.paid.map(item),
    subscriptions: (o.subscriptions ?? []).map((s) => ({
      id: s.id,
      name: s.name,
      status: t.subscriptionStatus[s.status] ?? s.status,
      nextInvoice: s.nextInvoiceDate ? formatDate(s.nextInvoiceDate, lang) : '–',
      price: formatOere(s.lines.reduce((sum, l) => sum + l.grossOere, 0), lang),
      actions: actionsOf(s.status).map((a) => ({
        href: `${base}/subscriptions/${s.id}/${a}`,
        label: t[a](s.name),
        short: t[`${a}Short`],
        style: a === 'cancel' ? 'secondary' as const : 'primary' as const,
      })),
    })),
  };
}

import type { FastifyInstance } from 'fastify';
import { portalRoute, signedInPage, withLang, type PortalContext } from '../portal-context.ts';
import { portalInvoicePdf, portalPaymentUrl } from '../portal-invoice.ts';
import { notFoundPage } from '../portal-views.ts';
import { requireSignedIn } from '../require-signed-in.ts';

/** A signed-in debtor's invoice: its PDF, and on to its pay page. Another customer's invoice is 404. */
export function portalInvoiceRoutes(app: FastifyInstance, ctx: PortalContext): void {
  const signedIn = { preHandler: [requireSignedIn(ctx)] };

  portalRoute<{ invoiceId: string }>(app, 'GET', '/invoices/:invoiceId/pdf', signedIn, async (req, reply) => {
    const { base, portal, session, lang } = signedInPage(req);
    const pdf = await ctx.db.read((sql) => portalInvoicePdf(sql, ctx.documents, portal.organizationId, session, req.params.invoiceId));
    if (!pdf) return notFoundPage(reply, base, lang);
    return reply
      .type('application/pdf')
      .header('Content-Disposition', `attachment; filename="${lang === 'da' ? 'faktura' : 'invoice'}-${pdf.number}.pdf"`)
      .header('Cache-Control', 'no-store')
      .header('X-Content-Type-Options', 'nosniff')
      .send(pdf.bytes);
  });

  portalRoute<{ invoiceId: string }>(app, 'GET', '/invoices/:invoiceId/pay', signedIn, async (req, reply) => {
    const { base, portal, session, lang } = signedInPage(req);
    const url = await ctx.db.tx((tx) => portalPaymentUrl(tx, portal.organizationId, session, req.params.invoiceId, ctx.payBase));
    if (!url) return notFoundPage(reply, base, lang);
    return reply.header('Cache-Control', 'no-store').redirect(withLang(url, lang), 303);
  });
}

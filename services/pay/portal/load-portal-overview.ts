import type { CustomerBalance } from '../../../contracts/payments.ts';
import type { Invoice } from '../../../contracts/invoices.ts';
import type { Subscription } from '../../../contracts/subscriptions.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Queryable } from '../../shared/db.ts';
import { getCustomerBalance } from '../../customers/get-customer-balance.ts';
import { invoiceSelect, toInvoice, type InvoiceRow } from '../../invoices/invoice-queries.ts';
import { OPEN_STATUSES, type InvoiceStatus } from '../../invoices/invoice-lifecycle.ts';
import { subscriptionSelect, toSubscription, type SubscriptionRow } from '../../subscriptions/subscription-queries.ts';
import type { PortalCustomer } from './portal-session.ts';

/** How many invoices of each kind (open, paid) a customer's page lists, newest first. */
export const PORTAL_INVOICE_LIMIT = 100;

export interface CustomerOverview {
  customer: PortalCustomer;
  balance: CustomerBalance;
  open: Invoice[];
  paid: Invoice[];
  /** Null when the portal offers no subscription self-service (the section is not shown at all). */
  subscriptions: Subscription[] | null;
}

/**
 * What a signed-in debtor sees, per customer the session reaches: the balance as GET /v1/customers/{id}/balance
 * computes it, the issued invoices (open ones: issued, overdue, with collections; and paid ones), and with
 * self-service the subscriptions. Drafts and invoices still being issued are not the debtor's business yet; credit
 * notes show through the balances of the invoices they credit.
 */
export async function loadPortalOverview(
  sql: Queryable,
  deps: { clock: Clock },
  organizationId: string,
  customers: PortalCustomer[],
  withSubscriptions: boolean,
): Promise<CustomerOverview[]> {
  const today = await deps.clock.today(organizationId);
  const out: CustomerOverview[] = [];
  for (const customer of customers) {
    const balance = await getCustomerBalance(sql, deps, organizationId, customer.id);
    const list = async (statuses: readonly InvoiceStatus[]) =>
      (await sql<InvoiceRow[]>`
        SELECT ${invoiceSelect(sql)} FROM invoices i
        WHERE i.organization_id = ${organizationId} AND i.customer_id = ${customer.id} AND i.type = 'invoice'
          AND i.status IN ${sql([...statuses])}
        ORDER BY i.issue_date DESC, i.number DESC
        LIMIT ${PORTAL_INVOICE_LIMIT}`).map((r) => toInvoice(r));
    const open = await list(OPEN_STATUSES);
    const paid = await list(['paid']);
    let subscriptions: Subscription[] | null = null;
    if (withSubscriptions) {
      const rows = await sql<SubscriptionRow[]>`
        SELECT ${subscriptionSelect(sql)} FROM subscriptions s
        WHERE s.organization_id = ${organizationId} AND s.customer_id = ${customer.id}
        ORDER BY s.id DESC`;
      subscriptions = rows.map((r) => toSubscription(r, today));
    }
    out.push({ customer, balance, open, paid, subscriptions });
  }
  return out;
}

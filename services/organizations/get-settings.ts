import type { Settings } from '../../contracts/settings.ts';
import type { Queryable } from '../shared/db.ts';

interface SettingsRow {
  id: string;
  name: string;
  cvr: string | null;
  street: string | null;
  postal_code: string | null;
  city: string | null;
  email: string | null;
  bank_reg: string | null;
  bank_account: string | null;
  fi_creditor_number: string | null;
  sandbox: boolean;
  plan: Settings['plan'];
  default_payment_terms_days: number;
  past_due_amount_oere: number;
  past_due_days: number;
  verification: Settings['verification'];
}

/** The organisation as GET /v1/settings shows it: set by the operator command, read here. */
export async function getSettings(sql: Queryable, organizationId: string): Promise<Settings> {
  const [r] = await sql<SettingsRow[]>`
    SELECT id, name, cvr, street, postal_code, city, email, bank_reg, bank_account, fi_creditor_number, sandbox, plan,
           default_payment_terms_days, past_due_amount_oere, past_due_days, verification
    FROM organizations WHERE id = ${organizationId}`;
  if (!r) throw new Error(`organisation ${organizationId} vanished under its key`);
  const anyAddress = r.street !== null || r.postal_code !== null || r.city !== null;
  return {
    organizationId: r.id,
    name: r.name,
    cvr: r.cvr,
    // Organisations are Danish businesses: the country is DK once there is an address at all.
    address: { street: r.street, postalCode: r.postal_code, city: r.city, country: anyAddress ? 'DK' : null },
    email: r.email,
    bank: { reg: r.bank_reg, account: r.bank_account },
    fiCreditorNumber: r.fi_creditor_number,
    sandbox: r.sandbox,
    plan: r.plan,
    defaultPaymentTermsDays: r.default_payment_terms_days,
    pastDue: { minOere: r.past_due_amount_oere, minDays: r.past_due_days },
    verification: r.verification,
  };
}

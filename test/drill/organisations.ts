/**
 * The drill's two organisations, made as an operator and an integrator make them: the organisation and its key by
 * the operator command (`npm run admin -- create-org`), everything else through the public API.
 *
 * - The shop, a live organisation: invoices issued and sent, and paid, many at a time.
 * - The calendar, a sandbox organisation whose test clock the drill advances: reminders (with the free payment
 *   reminder), the automatic hand-over to collection, and weekly subscriptions.
 *
 * Both have one webhook endpoint on the drill's receiver that takes every event type, made before anything else
 * happens in the organisation, so every event of theirs is one the receiver must get.
 */
import { EVENT_TYPES } from '../../contracts/events.ts';
import { reminderSettingsBody } from '../helpers/reminders.ts';
import { runScript } from '../helpers/scripts.ts';
import { ApiClient, type Answer, type RetryCounts } from './client.ts';

export interface DrillOrg {
  name: string;
  organizationId: string;
  api: ApiClient;
  /** When its webhook endpoint was created (ms): events from here on go to the receiver. */
  endpointCreatedAt: number;
  customers: string[];
}

const SELLER = ['--street', 'Nørregade 1', '--postal-code', '8000', '--city', 'Aarhus C', '--bank-reg', '1234', '--bank-account', '1234567890'];

async function createOrg(name: string, cvr: string, sandbox: boolean, stack: { databaseUrl: string; dataDir: string }): Promise<{ organizationId: string; apiKey: string }> {
  const run = await runScript(
    'services/admin/cli.ts',
    ['create-org', '--name', name, '--cvr', cvr, '--email', `faktura@${cvr}.example`, ...SELLER, ...(sandbox ? ['--sandbox'] : []), '--json'],
    { PATH: process.env.PATH ?? '/usr/bin:/bin', DATABASE_URL: stack.databaseUrl, DATA_DIR: stack.dataDir },
  );
  if (run.code !== 0) throw new Error(`npm run admin -- create-org exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as { organizationId: string; apiKey: string };
}

/** A setup call must succeed at once: the drill has not broken anything yet. */
async function must(api: ApiClient, method: string, path: string, key?: string, body?: unknown): Promise<Answer['body']> {
  const a = await api.untilAnswered(method, path, { ...(key ? { idempotencyKey: key } : {}), body, giveUpMs: 30_000 });
  if (!a || a.status >= 300) throw new Error(`${method} ${path} answered ${a ? `${a.status} ${JSON.stringify(a.body)}` : 'nothing'}`);
  return a.body.data;
}

export async function setUpOrganisations(
  stack: { apiUrl: string; databaseUrl: string; dataDir: string },
  webhookUrl: string,
  retries: RetryCounts,
): Promise<{ shop: DrillOrg; calendar: DrillOrg; subscriptions: string[] }> {
  const made = async (name: string, cvr: string, sandbox: boolean, customers: number): Promise<DrillOrg> => {
    const o = await createOrg(name, cvr, sandbox, stack);
    const api = new ApiClient(stack.apiUrl, o.apiKey, retries);
    const endpointCreatedAt = Date.now();
    await must(api, 'POST', '/v1/webhook-endpoints', `drill-endpoint-${cvr}`, { url: webhookUrl, eventTypes: [...EVENT_TYPES] });
    const ids: string[] = [];
    for (let i = 1; i <= customers; i++) {
      const c = await must(api, 'POST', '/v1/customers', `drill-customer-${cvr}-${i}`, {
        type: 'company',
        name: `Kunde ${i} ApS`,
        cvr: String(20_000_000 + i),
        email: `kunde${i}@kunde.example`,
        address: { street: `Vestergade ${i}`, postalCode: '1456', city: 'København K' },
      });
      ids.push(c.id as string);
    }
    return { name, organizationId: o.organizationId, api, endpointCreatedAt, customers: ids };
  };
  const shop = await made('Drill Butik ApS', '11223344', false, 10);
  const calendar = await made('Drill Kalender ApS', '55667788', true, 6);
  await must(calendar.api, 'PUT', '/v1/reminder-settings', 'drill-reminder-settings', reminderSettingsBody({ autoCollections: true, paymentReminderEnabled: true }));
  const today = (await must(calendar.api, 'GET', '/v1/test-clock')).today as string;
  const subscriptions: string[] = [];
  for (const [i, customerId] of calendar.customers.slice(0, 3).entries()) {
    const s = await must(calendar.api, 'POST', '/v1/subscriptions', `drill-subscription-${i}`, {
      customerId,
      name: 'Drift og hosting',
      interval: { unit: 'week', count: 1 },
      startDate: today,
      dueDays: 14,
      lines: [{ description: 'Hosting', quantity: 1, unitPriceOere: 49_500 }],
    });
    subscriptions.push(s.id as string);
  }
  // Invoices from before the load, so that the first reminders and hand-overs come due early in it.
  for (const [i, customerId] of calendar.customers.entries()) {
    await must(calendar.api, 'POST', '/v1/invoices?send=true', `drill-early-invoice-${i}`, {
      customerId,
      paymentTermsDays: 14,
      lines: [{ description: 'Rådgivning', quantity: 2, unitPriceOere: 95_000 }],
    });
  }
  return { shop, calendar, subscriptions };
}

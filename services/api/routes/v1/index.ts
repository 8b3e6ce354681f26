import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../../app.ts';
import { discoveryRoutes } from './discovery.ts';
import { customerRoutes } from './customers.ts';
import { productRoutes } from './products.ts';
import { accountRoutes } from './accounts.ts';
import { invoiceRoutes } from './invoices.ts';
import { creditNoteRoutes } from './creditnotes.ts';
import { webhookRoutes } from './webhooks.ts';
import { eventRoutes } from './events.ts';
import { testClockRoutes } from './test-clock.ts';
import { paymentRoutes } from './payments.ts';
import { paymentLinkRoutes } from './payment-links.ts';
import { receiptRoutes } from './receipts.ts';
import { reminderSettingsRoutes } from './reminder-settings.ts';
import { reminderRoutes } from './reminders.ts';
import { caseRoutes } from './cases.ts';
import { collectRoutes } from './collect.ts';
import { termsEvidenceRoutes } from './terms-evidence.ts';

export function registerV1Routes(app: FastifyInstance, deps: AppDeps): void {
  discoveryRoutes(app);
  customerRoutes(app, deps);
  productRoutes(app, deps);
  accountRoutes(app, deps);
  invoiceRoutes(app, deps);
  creditNoteRoutes(app, deps);
  webhookRoutes(app, deps);
  eventRoutes(app, deps);
  testClockRoutes(app, deps);
  paymentRoutes(app, deps);
  paymentLinkRoutes(app, deps);
  receiptRoutes(app, deps);
  reminderSettingsRoutes(app, deps);
  reminderRoutes(app, deps);
  caseRoutes(app, deps);
  collectRoutes(app, deps);
  termsEvidenceRoutes(app, deps);
}

/**
 * The boundary between the services and the durable workflows: every Restate service, object and workflow the
 * workflows endpoint serves, by name, with each handler's input. Services reach the engine only through the typed
 * client built on this map (services/shared/engine-client.ts), and the workflow definitions take their names from
 * it, so a renamed handler or a changed input is a type error on both sides instead of a 404 at run time.
 *
 * Objects are keyed; plain services (WebhookEvents) are not. `null` means the handler takes no input.
 */
export const WORKFLOW_SERVICES = {
  Housekeeping: 'Housekeeping',
  InvoiceMail: 'InvoiceMail',
  InvoiceIssue: 'InvoiceIssue',
  PaymentReceipt: 'PaymentReceipt',
  WebhookEvents: 'WebhookEvents',
  WebhookDelivery: 'WebhookDelivery',
  BusinessClock: 'BusinessClock',
  Dunning: 'Dunning',
  Case: 'Case',
  SubscriptionSchedule: 'SubscriptionSchedule',
  PortalSignInMail: 'PortalSignInMail',
  WakeScheduler: 'WakeScheduler',
  PastDue: 'PastDue',
  EventOutbox: 'EventOutbox',
} as const;

export type WorkflowService = keyof typeof WORKFLOW_SERVICES;

/**
 * What a wake-index target's handler is sent: the claim its poke took on the row (services/clock/wake-index.ts), which
 * the handler releases when it finishes. A call without one (older journals, an operator in the Restate UI) is served
 * the same and releases nothing.
 */
export type WakeClaim = { claim?: number } | null;

/** Each handler's input, by service. A wake-index target's handler takes a `WakeClaim`. */
export interface WorkflowInputs {
  /** Key: the job (`idempotency`, `due-work`). */
  Housekeeping: { start: null; wake: { gen: number }; runNow: null; status: null };
  /** Key: the invoice id. Mails the invoice's queued send once. */
  InvoiceMail: { deliver: WakeClaim };
  /** Key: the invoice id. Finishes an issue whose request stopped between reserving the number and committing it. */
  InvoiceIssue: { finish: WakeClaim };
  /** Key: the payment id. Renders the payment's receipt once. */
  PaymentReceipt: { render: WakeClaim };
  /** Unkeyed. Creates an event's webhook deliveries and makes their first attempts. */
  WebhookEvents: { route: { eventId: string; organizationId: string } };
  /** Key: the delivery id. `token` only on a timer armed before the wake index scheduled retries; a poke carries its claim. */
  WebhookDelivery: { wake: { token?: number; claim?: number } | null };
  /** Key: the organisation id. Pokes every wake-index row of the organisation that its business clock made due. */
  BusinessClock: { wakeDue: null };
  /** Key: `<organisation id>:<invoice id>`. Takes the invoice's reminder steps that are due, and delivers them. */
  Dunning: { wake: WakeClaim };
  /** Key: `<organisation id>:<case id>`. Takes the collection case's next lifecycle step when it is due. */
  Case: { wake: WakeClaim };
  /** Key: `<organisation id>:<subscription id>`. Runs the subscription's due periods, oldest first, each on its own. */
  SubscriptionSchedule: { wake: WakeClaim };
  /** Key: the sign-in link's id. Mails a customer-portal sign-in link once (services/pay/portal). */
  PortalSignInMail: { deliver: WakeClaim };
  /** Key: the organisation id. Announces customers whose past-due state time alone changed, and plans the next look. */
  PastDue: { wake: WakeClaim };
  /** Key: the organisation id. Drains the event outbox after a hand-off of one of its events to the engine failed. */
  EventOutbox: { drain: WakeClaim };
  /** Key: the wake shard, "0".."7". Claims and sends the shard's due rows, and keeps one timer to its earliest row. */
  WakeScheduler: { tick: { gen?: number } | null; nudge: { atMs?: number | null } | null };
}

export type WorkflowHandler<S extends WorkflowService> = keyof WorkflowInputs[S] & string;

/**
 * Durable work that can be listed in the wake index: a keyed handler that is safe to call again at any time (it
 * re-reads the facts and does nothing when nothing is due). The wake index stores exactly these triples.
 */
export type WorkTarget =
  | { service: 'InvoiceMail'; handler: 'deliver'; key: string }
  | { service: 'InvoiceIssue'; handler: 'finish'; key: string }
  | { service: 'PaymentReceipt'; handler: 'render'; key: string }
  | { service: 'WebhookDelivery'; handler: 'wake'; key: string }
  | { service: 'Dunning'; handler: 'wake'; key: string }
  | { service: 'Case'; handler: 'wake'; key: string }
  | { service: 'SubscriptionSchedule'; handler: 'wake'; key: string }
  | { service: 'PortalSignInMail'; handler: 'deliver'; key: string }
  | { service: 'PastDue'; handler: 'wake'; key: string }
  | { service: 'EventOutbox'; handler: 'drain'; key: string };

/** The wake-index targets by name, so a row's (service, handler) pair is written in one place. */
export const WORK = {
  invoiceMail: (invoiceId: string): WorkTarget => ({ service: 'InvoiceMail', handler: 'deliver', key: invoiceId }),
  invoiceIssue: (invoiceId: string): WorkTarget => ({ service: 'InvoiceIssue', handler: 'finish', key: invoiceId }),
  paymentReceipt: (paymentId: string): WorkTarget => ({ service: 'PaymentReceipt', handler: 'render', key: paymentId }),
  webhookDelivery: (deliveryId: string): WorkTarget => ({ service: 'WebhookDelivery', handler: 'wake', key: deliveryId }),
  dunning: (organizationId: string, invoiceId: string): WorkTarget => ({ service: 'Dunning', handler: 'wake', key: dunningKey(organizationId, invoiceId) }),
  collectionCase: (organizationId: string, caseId: string): WorkTarget => ({ service: 'Case', handler: 'wake', key: `${organizationId}:${caseId}` }),
  subscriptionSchedule: (organizationId: string, subscriptionId: string): WorkTarget => ({
    service: 'SubscriptionSchedule', handler: 'wake', key: `${organizationId}:${subscriptionId}`,
  }),
  portalSignInMail: (linkId: string): WorkTarget => ({ service: 'PortalSignInMail', handler: 'deliver', key: linkId }),
  pastDue: (organizationId: string): WorkTarget => ({ service: 'PastDue', handler: 'wake', key: organizationId }),
  eventOutbox: (organizationId: string): WorkTarget => ({ service: 'EventOutbox', handler: 'drain', key: organizationId }),
} as const;

/**
 * The Dunning object's key names the organisation with the invoice, so every statement the engine sends is scoped by
 * organisation and reads the invoice through its (organization_id, id) key.
 */
export const dunningKey = (organizationId: string, invoiceId: string): string => `${organizationId}:${invoiceId}`;
export function parseDunningKey(key: string): { organizationId: string; invoiceId: string } {
  const [organizationId, invoiceId, ...rest] = key.split(':');
  if (!organizationId || !invoiceId || rest.length > 0) throw new Error(`not a dunning key: ${key}`);
  return { organizationId, invoiceId };
}

/** The Case object's key, `<organisation id>:<case id>` (WORK.collectionCase). */
export function parseCaseKey(key: string): { organizationId: string; caseId: string } {
  const [organizationId, caseId, ...rest] = key.split(':');
  if (!organizationId || !caseId || rest.length > 0) throw new Error(`not a case key: ${key}`);
  return { organizationId, caseId };
}

/** The SubscriptionSchedule object's key, `<organisation id>:<subscription id>` (WORK.subscriptionSchedule). */
export function parseSubscriptionKey(key: string): { organizationId: string; subscriptionId: string } {
  const [organizationId, subscriptionId, ...rest] = key.split(':');
  if (!organizationId || !subscriptionId || rest.length > 0) throw new Error(`not a subscription key: ${key}`);
  return { organizationId, subscriptionId };
}

/** Housekeeping jobs, one object key each. */
export const HOUSEKEEPING_JOBS = ['idempotency', 'due-work'] as const;
export type HousekeepingJob = (typeof HOUSEKEEPING_JOBS)[number];

import type { EndpointOptions } from '@restatedev/restate-sdk';
import { createHousekeeping, type HousekeepingActivities } from './housekeeping.ts';
import { createInvoiceMail, type InvoiceMailActivities } from './invoice-mail.ts';
import { createInvoiceIssue, type InvoiceIssueActivities } from './invoice-issue.ts';
import { createWebhookDelivery, type WebhookDeliveryActivities } from './webhook-delivery.ts';
import { createWebhookEvents, type WebhookEventsActivities } from './webhook-events.ts';
import { createBusinessClock } from './business-clock.ts';
import { createWakeScheduler, type WakeSchedulerActivities } from './wake-scheduler.ts';
import { createPastDue, type PastDueActivities } from './past-due.ts';
import { createEventOutbox, type EventOutboxActivities } from './event-outbox.ts';
import type { WakeClaimActivities } from './shared/wake-claim.ts';
import { createPaymentReceipt, type PaymentReceiptActivities } from './payment-receipt.ts';
import { createDunning, type DunningActivities } from './dunning.ts';
import { createCase, type CaseActivities } from './case.ts';
import { createSubscriptionSchedule, type SubscriptionScheduleActivities } from './subscription-schedule.ts';
import { createPortalSignInMail, type PortalSignInMailActivities } from './portal-sign-in-mail.ts';

/** Every side effect the workflows call, injected so that workflow files never touch the database themselves. */
export type Activities = HousekeepingActivities &
  InvoiceMailActivities &
  InvoiceIssueActivities &
  WebhookDeliveryActivities &
  WebhookEventsActivities &
  WakeSchedulerActivities &
  WakeClaimActivities &
  PastDueActivities &
  EventOutboxActivities &
  PaymentReceiptActivities &
  DunningActivities &
  CaseActivities &
  SubscriptionScheduleActivities &
  PortalSignInMailActivities;

/** The Restate services, objects and workflows the endpoint serves. */
export function createServices(activities: Activities): EndpointOptions['services'] {
  return [
    createHousekeeping(activities),
    createInvoiceMail(activities),
    createInvoiceIssue(activities),
    createWebhookEvents(activities),
    createWebhookDelivery(activities),
    createBusinessClock(),
    createWakeScheduler(activities),
    createPastDue(activities),
    createEventOutbox(activities),
    createPaymentReceipt(activities),
    createDunning(activities),
    createCase(activities),
    createSubscriptionSchedule(activities),
    createPortalSignInMail(activities),
  ];
}

import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope, Nullable } from '../../../../contracts/common.ts';
import { Invoice } from '../../../../contracts/invoices.ts';
import {
  Subscription,
  SubscriptionCreate,
  SubscriptionInvoiceListQuery,
  SubscriptionInvoicePreview,
  SubscriptionListQuery,
  SubscriptionPatch,
} from '../../../../contracts/subscriptions.ts';
import { startSubscription } from '../../../subscriptions/start-subscription.ts';
import { getSubscription } from '../../../subscriptions/get-subscription.ts';
import { listSubscriptions } from '../../../subscriptions/list-subscriptions.ts';
import { listSubscriptionInvoices } from '../../../subscriptions/list-subscription-invoices.ts';
import { previewNextInvoice } from '../../../subscriptions/preview-next-invoice.ts';
import { pauseResumeOrCancel } from '../../../subscriptions/pause-resume-or-cancel.ts';
import { changeSubscription } from '../../../subscriptions/change-subscription.ts';
import { invoiceNextDuePeriod } from '../../../subscriptions/invoice-next-due-period.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const SubscriptionParams = Type.Object({ subscriptionId: Type.String({ description: 'Subscription id (UUID)' }) }, { additionalProperties: false });
const tags = ['Subscriptions'];
type Params = { subscriptionId: string };

export function subscriptionRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db, keyring, clock } = deps;

  app.get<{ Querystring: SubscriptionListQuery }>(
    '/subscriptions',
    {
      config: { scope: 'subscriptions:read' },
      schema: {
        summary: 'List subscriptions, newest first',
        description:
          'Filters are exact matches; `nextInvoiceBefore` keeps subscriptions whose `nextInvoiceDate` is on or before the date ' +
          '(paused, cancelled and ended ones have none).',
        tags,
        querystring: SubscriptionListQuery,
        response: { 200: ListEnvelope(Subscription) },
      },
    },
    async (req) => {
      const org = req.auth.organizationId;
      const today = await clock.today(org);
      const { items, nextCursor } = await db.read((sql) => listSubscriptions(sql, keyring, org, req.query, today));
      return { data: items, meta: { nextCursor } };
    },
  );

  app.post<{ Body: SubscriptionCreate }>(
    '/subscriptions',
    {
      config: { scope: 'subscriptions:write' },
      schema: {
        summary: 'Create a subscription',
        description:
          'Active from the start; period k starts on startDate + k × interval and is invoiced on its start date (billing in ' +
          'advance). Defaults: `dueDays` 30, `autoSend` true, `endDate` null. Refusals: `endDate` before `startDate` (422 ' +
          '`invalid_end_date`), the invoice lines\' VAT rules (422), an unknown customer (404 `customer_not_found`). ' +
          'A start today or earlier is invoiced by the schedule right after, never inside this request.',
        tags,
        body: SubscriptionCreate,
        response: { 201: Envelope(Subscription) },
      },
    },
    (req, reply) => mutate(deps, req, reply, startSubscription(deps, req.auth.organizationId, req.body)),
  );

  app.get<{ Params: Params }>(
    '/subscriptions/:subscriptionId',
    {
      config: { scope: 'subscriptions:read' },
      schema: { summary: 'Get a subscription', tags, params: SubscriptionParams, response: { 200: Envelope(Subscription) } },
    },
    async (req) => {
      const org = req.auth.organizationId;
      const today = await clock.today(org);
      return { data: await db.read((sql) => getSubscription(sql, org, req.params.subscriptionId, today)), meta: {} };
    },
  );

  app.patch<{ Params: Params; Body: SubscriptionPatch }>(
    '/subscriptions/:subscriptionId',
    {
      config: { scope: 'subscriptions:write' },
      schema: {
        summary: 'Change a subscription (partial, future periods only)',
        description:
          'Omitted fields are kept, `null` clears a field, a value replaces it (`lines` and `metadata` as a whole). Invoices ' +
          'already made keep what they had. A new `interval` applies from `nextInvoiceDate` on: that date stays and later ' +
          'periods follow the new interval counted from it. `customerId` and `startDate` cannot change once a period was ' +
          'invoiced (422 `subscription_already_invoiced`); a cancelled subscription cannot change (422 `invalid_transition`).',
        tags,
        params: SubscriptionParams,
        body: SubscriptionPatch,
        response: { 200: Envelope(Subscription) },
      },
    },
    (req, reply) => mutate(deps, req, reply, changeSubscription(deps, req.auth.organizationId, req.params.subscriptionId, req.body)),
  );

  const transitions = [
    ['pause', 'Pause a subscription', 'active → paused (`subscription.paused`): no period is invoiced while paused.'],
    [
      'resume',
      'Resume a paused subscription',
      'paused → active (`subscription.resumed`): the periods whose start fell while paused are skipped, not billed; ' +
        '`nextInvoiceDate` becomes the first period start on or after today.',
    ],
    ['cancel', 'Cancel a subscription', 'active or paused → cancelled (`subscription.cancelled`), final.'],
  ] as const;
  for (const [transition, summary, description] of transitions) {
    app.post<{ Params: Params }>(
      `/subscriptions/:subscriptionId/${transition}`,
      {
        config: { scope: 'subscriptions:write' },
        schema: {
          summary,
          description: `${description} Any other status: 422 \`invalid_transition\`, its message naming the current status.`,
          tags,
          params: SubscriptionParams,
          response: { 200: Envelope(Subscription) },
        },
      },
      (req, reply) => mutate(deps, req, reply, pauseResumeOrCancel(deps, req.auth.organizationId, req.params.subscriptionId, transition)),
    );
  }

  app.post<{ Params: Params }>(
    '/subscriptions/:subscriptionId/run',
    {
      config: { scope: 'subscriptions:write', rateClass: 'document' },
      schema: {
        summary: "Invoice the subscription's next due period now",
        description:
          'Issues the oldest period that is due and has no invoice yet, exactly as the schedule would (issued on its start date, ' +
          'or on the day of creation for a period that started before the subscription was created; due `dueDays` later; sent when ' +
          '`autoSend` and the customer has an e-mail). 201 with the issued invoice, its `Location` and `meta.period: {start, end}`; ' +
          '`subscription.invoiced` and the invoice\'s own events. One invoice per period: a run waits up to 10 s for another run of ' +
          'the same subscription (the lease), then runs the next due period if one is left; nothing due is 422 ' +
          '`subscription_not_due`, a lease held longer 409 `subscription_run_in_progress`, a paused or cancelled subscription 422 ' +
          '`invalid_transition`. Counts against the document rate class.',
        tags,
        params: SubscriptionParams,
        response: { 201: Envelope(Invoice) },
      },
    },
    (req, reply) => mutate(deps, req, reply, invoiceNextDuePeriod(deps, req.auth.organizationId, req.params.subscriptionId)),
  );

  app.get<{ Params: Params }>(
    '/subscriptions/:subscriptionId/next_invoice',
    {
      config: { scope: 'subscriptions:read' },
      schema: {
        summary: 'Preview the next invoice',
        description:
          'The next period\'s invoice as it will be computed (`date` is its issue date: the period start, or today when that ' +
          'start has passed and the period waits for its run). `data` is null when no invoice is coming (paused, cancelled, ' +
          'ended). Nothing is issued.',
        tags,
        params: SubscriptionParams,
        response: { 200: Envelope(Nullable(SubscriptionInvoicePreview)) },
      },
    },
    async (req) => {
      const org = req.auth.organizationId;
      const today = await clock.today(org);
      return { data: await db.read((sql) => previewNextInvoice(sql, org, req.params.subscriptionId, today)), meta: {} };
    },
  );

  app.get<{ Params: Params; Querystring: SubscriptionInvoiceListQuery }>(
    '/subscriptions/:subscriptionId/invoices',
    {
      config: { scope: 'subscriptions:read' },
      schema: {
        summary: "List a subscription's invoices, newest period first",
        tags,
        params: SubscriptionParams,
        querystring: SubscriptionInvoiceListQuery,
        response: { 200: ListEnvelope(Invoice) },
      },
    },
    async (req) => {
      const org = req.auth.organizationId;
      const { items, nextCursor } = await db.read((sql) => listSubscriptionInvoices(sql, keyring, org, req.params.subscriptionId, req.query));
      return { data: items, meta: { nextCursor } };
    },
  );
}

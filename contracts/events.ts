import { Type, type Static } from 'typebox';
import { DateTimeString, ListQuery, Uuid } from './common.ts';

/**
 * The complete catalogue of event types (docs/api-conventions.md, "Events, webhooks and the test clock"). Its size is
 * the bound of a webhook endpoint's `eventTypes` (contracts/webhooks.ts), derived, so a type added here raises it.
 */
export const EVENT_TYPES = [
  'invoice.issued',
  'invoice.sent',
  'invoice.paid',
  'invoice.overdue',
  'invoice.credited',
  'invoice.collections',
  'payment.received',
  'customer.past_due',
  'customer.settled',
  'subscription.created',
  'subscription.updated',
  'subscription.paused',
  'subscription.resumed',
  'subscription.cancelled',
  'subscription.ended',
  'subscription.invoiced',
  'subscription.payment_succeeded',
  'subscription.payment_failed',
  'subscription.payment_method.attached',
  'subscription.payment_method.detached',
  'subscription.payment_method.expiring',
  'sag.oprettet',
  'sag.paakrav_sendt',
  'sag.overdraget',
  'sag.betaling_modtaget',
  'sag.afsluttet',
  'sag.tilbagekaldt',
  'sag.status_aendret',
  'reminder.sent',
  'reminder.failed',
  'payment_plan.created',
  'payment_plan.completed',
  'payment_plan.broken',
  'payment_plan.cancelled',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export const EventTypeSchema = Type.Union(
  EVENT_TYPES.map((t) => Type.Literal(t)),
  { description: 'An event type from the catalogue' },
);

/** The type of the ping that `POST /v1/webhook-endpoints/{id}/test` queues; it is never in the event log. */
export const PING_EVENT_TYPE = 'webhook.ping';

const EntityRef = Type.Object(
  { id: Uuid, sekvensnummer: Type.Integer({ minimum: 1, description: 'Per-entity sequence number: 1, 2, 3… without gaps' }) },
  { additionalProperties: false },
);

/**
 * The blocks an envelope names its entity by: `{id, sekvensnummer}` of the invoice, payment, customer, subscription or
 * case the event is about (events.entity_family).
 */
export const EVENT_BLOCKS = ['invoice', 'payment', 'customer', 'subscription', 'sag'] as const;

/**
 * The families of event types: the part of a type's name before the first dot. A family is delivered in its own
 * block, except `reminder` and `payment_plan`: a reminder and a payment plan are about their invoice, so their events
 * carry the `invoice` block and count in the invoice's sekvensnummer (contracts/event-catalogue.ts, EVENT_FAMILY_BLOCK).
 */
export const EVENT_FAMILIES = [...EVENT_BLOCKS, 'reminder', 'payment_plan'] as const;

const envelopeFields = {
  id: Type.String({ description: 'Event id: the webhook-id header of every delivery of this event' }),
  type: Type.String({ description: 'Event type' }),
  timestamp: DateTimeString,
  organizationId: Uuid,
};
const EventData = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  additionalProperties: true,
  description: 'Amounts, dates, ids and externalReference; never names, e-mail addresses, phone numbers or CPR',
});

/**
 * One event, exactly as a webhook delivers it and as the pull feed lists it: id, type, timestamp, organizationId,
 * one family block (`invoice`, `payment`, `customer`, `subscription` or `sag`: {id, sekvensnummer}), data, in that
 * order. A ping has no family block. One variant per family keeps every field required and the key order fixed.
 */
export const EventEnvelope = Type.Union(
  [
    ...EVENT_BLOCKS.map((block) =>
      Type.Object({ ...envelopeFields, [block]: EntityRef, data: EventData }, { title: `Event (${block})` }),
    ),
    Type.Object({ ...envelopeFields, data: EventData }, { title: 'Event (ping)' }),
  ],
  { title: 'Event' },
);
export type EventEnvelope = {
  id: string;
  type: string;
  timestamp: string;
  organizationId: string;
  data: Record<string, unknown>;
} & Partial<Record<(typeof EVENT_BLOCKS)[number], { id: string; sekvensnummer: number }>>;

/** `since` is an instant with an offset or a calendar date (midnight in Europe/Copenhagen). */
export const SinceParam = Type.Union([DateTimeString, Type.String({ format: 'date' })], {
  description: 'ISO-8601 date-time with offset, or YYYY-MM-DD (from midnight, Europe/Copenhagen)',
});

export const EventListQuery = Type.Object(
  {
    since: Type.Optional(SinceParam),
    type: Type.Optional(EventTypeSchema),
    ...ListQuery,
  },
  { additionalProperties: false },
);
export type EventListQuery = Static<typeof EventListQuery>;

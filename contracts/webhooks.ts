import { Type, type Static } from 'typebox';
import { DateTimeString, ListQuery, Nullable, Uuid } from './common.ts';
import { EVENT_TYPES, EventTypeSchema, SinceParam } from './events.ts';

const EventTypes = Type.Array(EventTypeSchema, {
  minItems: 1,
  // 1..N distinct catalogue values, N the catalogue's size: at most the whole catalogue (docs/api-conventions.md,
  // "Events, webhooks and the test clock"). Derived, so a type added to the catalogue raises it.
  maxItems: EVENT_TYPES.length,
  uniqueItems: true,
  description: `Event types this endpoint receives: 1..${EVENT_TYPES.length} distinct values from the catalogue`,
});
const Description = Nullable(Type.String({ maxLength: 200 }));

export const WebhookEndpointCreate = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 500, description: 'HTTPS address of the receiver; cannot change later' }),
    eventTypes: EventTypes,
    description: Type.Optional(Description),
  },
  { additionalProperties: false, title: 'WebhookEndpointCreate' },
);
export type WebhookEndpointCreate = Static<typeof WebhookEndpointCreate>;

export const WebhookEndpointPatch = Type.Object(
  {
    eventTypes: Type.Optional(EventTypes),
    active: Type.Optional(Type.Boolean({ description: 'false: the endpoint receives nothing; its events wait for a replay' })),
    description: Type.Optional(Description),
  },
  { additionalProperties: false, title: 'WebhookEndpointPatch', description: 'Partial update; `url` cannot change' },
);
export type WebhookEndpointPatch = Static<typeof WebhookEndpointPatch>;

export const WebhookEndpoint = Type.Object(
  {
    id: Uuid,
    url: Type.String(),
    eventTypes: Type.Array(Type.String()),
    description: Nullable(Type.String()),
    active: Type.Boolean(),
    createdAt: DateTimeString,
    updatedAt: DateTimeString,
  },
  { title: 'WebhookEndpoint' },
);
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

/** Creation and rotation answer with the endpoint and its signing secret; nothing else ever shows the secret. */
export const WebhookEndpointWithSecret = Type.Object(
  {
    ...WebhookEndpoint.properties,
    secret: Type.String({ description: 'Signing secret (whsec_…), shown only in this response' }),
  },
  { title: 'WebhookEndpointWithSecret' },
);
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecret>;

export const ReplayBody = Type.Object(
  { since: SinceParam },
  { additionalProperties: false, title: 'WebhookReplay' },
);
export type ReplayBody = Static<typeof ReplayBody>;

export const ReplayResult = Type.Object(
  {
    requeued: Type.Integer({ description: 'Failed and given-up deliveries queued again' }),
    enqueued: Type.Integer({ description: 'Events queued for this endpoint for the first time' }),
    possiblyMore: Type.Boolean({ description: 'The 10,000 cap was reached: call again for the rest' }),
  },
  { title: 'WebhookReplayResult' },
);
export type ReplayResult = Static<typeof ReplayResult>;

export const WebhookEndpointParams = Type.Object(
  { endpointId: Type.String({ description: 'Webhook endpoint id (UUID)' }) },
  { additionalProperties: false },
);

export const WebhookEndpointListQuery = Type.Object({ ...ListQuery }, { additionalProperties: false });
export type WebhookEndpointListQuery = Static<typeof WebhookEndpointListQuery>;

import { Type, type Static } from 'typebox';
import { Uuid } from './common.ts';

/**
 * Start links (docs/api-conventions.md, "Start links"): a link a person opens to complete one step of the
 * organisation's setup. `POST /v1/verification-sessions`, `/v1/card-setup-sessions` and `/v1/accounting-connections`
 * all answer with this shape; `status` is `pending` while the link is open and the step's final status once done.
 */
export const StartLinkSession = Type.Object(
  {
    id: Uuid,
    url: Type.Union([Type.String({ format: 'uri' }), Type.Null()], {
      description: 'The page a person opens to complete or abandon the step; null once the step is completed (no new link)',
    }),
    status: Type.Union([Type.Literal('pending'), Type.Literal('verified'), Type.Literal('ready'), Type.Literal('connected')], {
      description:
        '`pending` while the link is open; then `verified` (verification session), `ready` (card setup) or `connected` ' +
        '(accounting connection), final',
    }),
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: "When the link stops working (24 hours after it was opened, on the organisation's clock); null once completed",
    }),
  },
  { title: 'StartLinkSession' },
);
export type StartLinkSession = Static<typeof StartLinkSession>;

import type { FastifyInstance } from 'fastify';
import { Envelope } from '../../../../contracts/common.ts';
import { StartLinkSession } from '../../../../contracts/start-links.ts';
import { DEFAULT_PAY_PORT } from '../../../../services/shared/config.ts';
import { openStartLink } from '../../../start-links/open-start-link.ts';
import type { StartLinkKind } from '../../../start-links/start-link-kinds.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const ROUTES: readonly { path: string; kind: StartLinkKind; summary: string; description: string }[] = [
  {
    path: '/verification-sessions',
    kind: 'verification',
    summary: 'Start (or report) the business identity verification',
    description:
      'Opening it makes the organisation\'s `verification` (GET /v1/settings) `pending`; completing it on the page makes ' +
      'it `verified`, and payouts (GET /v1/settlements) are no longer `held`; abandoning it makes it `unverified` again.',
  },
  {
    path: '/card-setup-sessions',
    kind: 'card_setup',
    summary: 'Start (or report) the hosted card-field setup',
    description: 'Completed on the page, the session reports `ready`.',
  },
  {
    path: '/accounting-connections',
    kind: 'accounting_connection',
    summary: 'Connect (or report the connection to) the accounting system',
    description: 'Completed on the page, the session reports `connected`: the repeat call reports the current connection.',
  },
];

const COMMON =
  'No body. The first call answers 201 with a link a person opens (no `Location`: there is no read route). A repeat ' +
  'while the link is open answers 200 with the same session (`pending`, the same `url` and `expiresAt`); once the ' +
  'step is completed, 200 with its final status, `url` and `expiresAt` null. After an abandoned or expired link ' +
  '(24 hours, on the organisation\'s clock) the next call opens a new session (201, a new id). ';

export function startLinkRoutes(app: FastifyInstance, deps: AppDeps): void {
  const base = deps.payBaseUrl ?? `http://127.0.0.1:${DEFAULT_PAY_PORT}`;
  for (const { path, kind, summary, description } of ROUTES) {
    app.post(
      path,
      {
        config: { scope: 'settings:write' },
        schema: {
          summary,
          description: COMMON + description,
          tags: ['Settings'],
          response: { '2xx': { description: '201 with a new session; 200 with the open or completed one', ...Envelope(StartLinkSession) } },
        },
      },
      (req, reply) =>
        mutate(deps, req, reply, async (tx) => {
          const { created, session } = await openStartLink(tx, deps.keyring, req.auth.organizationId, kind, base);
          return { status: created ? 201 : 200, data: session };
        }),
    );
  }
}

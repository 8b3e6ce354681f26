import type { FastifyInstance } from 'fastify';
import { LIMITATION_YEARS } from '../../../law/danish-law.ts';
import { Type } from 'typebox';
import { Envelope } from '../../../../contracts/common.ts';
import { CASE_BODY_LIMIT, CaseCreate, CaseStatusView } from '../../../../contracts/cases.ts';
import { openCase } from '../../../cases/open-case.ts';
import { getCase } from '../../../cases/get-case.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const CaseParams = Type.Object({ caseId: Type.String({ description: 'Case id (UUID)' }) }, { additionalProperties: false });
const tags = ['Collection cases'];

export function caseRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db } = deps;

  app.post<{ Body: CaseCreate }>(
    '/cases',
    {
      config: { scope: 'cases:write' },
      // docs/api-conventions.md, "Collection cases": 64 KiB, refused as 413 payload_too_large before the body is read
      // or parsed.
      bodyLimit: CASE_BODY_LIMIT,
      schema: {
        summary: 'Create a collection case',
        description:
          'Creates a case in `OPRETTET` from 1..50 claims and 1..20 debtors (body at most 64 KiB). Debtor names, addresses, ' +
          'e-mails, phones, CPR numbers and claim descriptions are stored encrypted; `cpr` is write-only and never returned, ' +
          'logged or evented. A claim due ' + LIMITATION_YEARS + ' years or more before today is 422 `claim_time_barred`, one due today or later ' +
          '422 `invoice_not_due` (`details` point at `/fordringer/{i}/forfaldsdato`). The same `externalReference` again with ' +
          'the same body, under any Idempotency-Key, answers 200 with the existing case and `meta.replayed: true`; with another ' +
          'body 409 `case_conflict`. `caseNumber` counts 1, 2, 3… per organisation. Writes `sag.oprettet`.',
        tags,
        body: CaseCreate,
        // One documented success (the replay by externalReference answers 200 with the same envelope, as the description says).
        response: { 201: Envelope(CaseStatusView) },
      },
    },
    (req, reply) => mutate(deps, req, reply, openCase(deps, req.auth.organizationId, req.body)),
  );

  app.get<{ Params: { caseId: string } }>(
    '/cases/:caseId',
    {
      config: { scope: 'cases:read' },
      schema: {
        summary: "A collection case's status",
        description:
          'The status without personal data: state, `status` (aktiv, afventer, lukket), `paakravFrist` once the demand letter ' +
          'is sent, and `eventVersion`, the number of `sag.*` events so far. An unknown id, a malformed one and another ' +
          "organisation's are the same 404 `case_not_found`.",
        tags,
        params: CaseParams,
        response: { 200: Envelope(CaseStatusView) },
      },
    },
    async (req) => ({ data: await db.read((sql) => getCase(sql, req.auth.organizationId, req.params.caseId)), meta: {} }),
  );
}

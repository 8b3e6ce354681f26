import type { FastifyError, FastifyInstance } from 'fastify';
import type { ErrorObject } from 'ajv';
import { Envelope } from '../../../../contracts/common.ts';
import { TermsEvidence, TermsEvidenceCreate } from '../../../../contracts/terms-evidence.ts';
import { acceptTerms, instantOutOfRange, utcInstant } from '../../../terms/accept-terms.ts';
import { DomainError } from '../../../../services/shared/errors.ts';
import { validationDetails } from '../../../../services/shared/error-envelope.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

/**
 * docs/api-conventions.md, "Terms evidence": the evidence body is at most 32 KiB, checked from Content-Length (and
 * while reading) before any parsing.
 */
export const TERMS_EVIDENCE_BODY_LIMIT = 32 * 1024;

const tags = ['Terms evidence'];

export function termsEvidenceRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Body: TermsEvidenceCreate }>(
    '/betingelse-accept',
    {
      config: { scope: 'terms:accept' },
      bodyLimit: TERMS_EVIDENCE_BODY_LIMIT,
      // The handler turns a failed validation into the 400 itself, so that a body with neither reference gets one
      // plain answer at the body rather than two "is required" at /fakturaId and /eksternOrdreRef.
      attachValidation: true,
      schema: {
        summary: 'Record that terms were accepted (write-once evidence)',
        description:
          'Records which version of the terms (and the SHA-256 of their exact text) was accepted when, for an invoice ' +
          '(`fakturaId`), an order of yours (`eksternOrdreRef`) or both. The body is at most 32 KiB (413 `payload_too_large`). ' +
          'A new record answers 201. The same `idempotensnoegle` with the same content, under any Idempotency-Key, answers ' +
          '200 with the stored record and `meta.replayed: true`; with other content 409 `evidence_conflict` (`details` name ' +
          'the fields that differ). "The same content" compares `accepteretKl` as an instant. `accepteretKl` is answered in ' +
          'UTC with `Z`. An unknown or another organisation\'s `fakturaId` (or a credit note\'s) is 404 `invoice_not_found`; ' +
          "with `fakturaId`, the invoice's timeline gets `terms_accepted`. The record is never changed or removed.",
        tags,
        body: TermsEvidenceCreate,
        // One documented success: the replay by idempotensnoegle answers 200 with the same envelope, as described above.
        response: { 201: Envelope(TermsEvidence) },
      },
    },
    async (req, reply) => {
      if (req.validationError) throw invalidBody(req.validationError as FastifyError);
      if (utcInstant(req.body.accepteretKl) === undefined) throw instantOutOfRange();
      return mutate(deps, req, reply, async (tx) => {
        const { evidence, replayed } = await acceptTerms(tx, req.auth.organizationId, req.body);
        return replayed ? { status: 200, data: evidence, meta: { replayed: true } } : { status: 201, data: evidence };
      });
    },
  );
}

/**
 * The 400 of a body (or query string) the schema refused, as the app's error handler writes it, except that a body
 * missing both `fakturaId` and `eksternOrdreRef` is one detail at the body itself.
 */
/**
 * Where the "fakturaId or eksternOrdreRef" rule (docs/api-conventions.md, "Terms evidence") sits in the body schema
 * (its errors' schemaPath).
 */
const EITHER_REFERENCE = '#/allOf/0/';

function invalidBody(err: FastifyError): DomainError {
  const part = err.validationContext ?? 'body';
  const errors = (err.validation ?? []) as ErrorObject[];
  const fromRule = (e: ErrorObject) => e.instancePath === '' && e.schemaPath.startsWith(EITHER_REFERENCE);
  const neither = part === 'body' && errors.some(fromRule);
  const rest = neither ? errors.filter((e) => !fromRule(e)) : errors;
  const details = [
    ...(neither ? [{ path: '', message: 'must have fakturaId or eksternOrdreRef (or both)' }] : []),
    ...validationDetails(rest, part),
  ];
  const first = details[0];
  const message = first ? `${first.path || part} ${first.message.replace(`${part} `, '')}.` : 'The request is invalid.';
  return new DomainError('validation_failed', message, { details });
}

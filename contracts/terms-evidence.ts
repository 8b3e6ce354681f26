import { Type, type Static } from 'typebox';
import { DateTimeString, Nullable, Uuid } from './common.ts';

/**
 * An instant with its offset, as RFC 3339 writes it: `Z` or `±hh:mm` is required (without one the instant would be
 * whatever time zone the reader assumes). The `date-time` format checks the calendar; the pattern the offset's form.
 */
const AcceptedAt = Type.String({
  format: 'date-time',
  pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$',
  description:
    'When the terms were accepted: an ISO-8601 date-time with `Z` or a `±hh:mm` offset (required). Kept to the ' +
    'microsecond and answered in UTC with `Z`.',
});

export const TermsEvidenceCreate = Type.Object(
  {
    fakturaId: Type.Optional(Type.String({ format: 'uuid', description: "The invoice the terms were accepted for (this organisation's)" })),
    eksternOrdreRef: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "The caller's own order reference" })),
    betingelseVersion: Type.String({ minLength: 1, maxLength: 100, description: 'The version of the terms accepted' }),
    betingelseHash: Type.String({
      pattern: '^[0-9a-f]{64}$',
      description: 'SHA-256 of the exact accepted text: 64 lowercase hexadecimal characters',
    }),
    accepteretKl: AcceptedAt,
    idempotensnoegle: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'De-duplicates the evidence record across requests, whatever their Idempotency-Key (it may equal it)',
    }),
  },
  {
    additionalProperties: false,
    // At least one of the two references (400 validation_failed at the body, pointer ``, when neither is given).
    // Inside allOf, so that generated client types keep the object's fields (a bare anyOf of `required` lists
    // becomes `unknown` in openapi-typescript).
    allOf: [{ anyOf: [{ required: ['fakturaId'] }, { required: ['eksternOrdreRef'] }] }],
    title: 'TermsEvidenceCreate',
    description: 'Evidence that terms were accepted: `fakturaId`, `eksternOrdreRef` or both',
  },
);
export type TermsEvidenceCreate = Static<typeof TermsEvidenceCreate>;

export const TermsEvidence = Type.Object(
  {
    id: Uuid,
    fakturaId: Nullable(Uuid),
    eksternOrdreRef: Nullable(Type.String()),
    betingelseVersion: Type.String(),
    betingelseHash: Type.String(),
    accepteretKl: Type.String({
      description:
        'The accepted instant in UTC with `Z`: milliseconds (`.sssZ`), or microseconds when the instant has them',
    }),
    idempotensnoegle: Type.String(),
    createdAt: DateTimeString,
  },
  { title: 'TermsEvidence', description: 'A write-once record of accepted terms' },
);
export type TermsEvidence = Static<typeof TermsEvidence>;

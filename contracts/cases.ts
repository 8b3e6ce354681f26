import { Type, type Static } from 'typebox';
import { DateString, DateTimeString, Email, Nullable, Uuid } from './common.ts';

/**
 * The largest case create body, in bytes (docs/api-conventions.md, "Collection cases"): a larger one is 413
 * payload_too_large, before parsing.
 */
export const CASE_BODY_LIMIT = 64 * 1024;

export const CaseAddress = Type.Object(
  {
    gade: Type.Optional(Type.String({ maxLength: 200, description: 'Street and number' })),
    postnummer: Type.Optional(Type.String({ maxLength: 10 })),
    by: Type.Optional(Type.String({ maxLength: 100 })),
    land: Type.Optional(Type.String({ maxLength: 100 })),
    darId: Type.Optional(Type.String({ maxLength: 36, description: "The address's id in DAR (Danmarks Adresseregister)" })),
    kommunekode: Type.Optional(Type.String({ pattern: '^[0-9]{4}$', description: 'Municipality code, exactly 4 digits' })),
  },
  { additionalProperties: false, title: 'CaseAddress', description: 'Stored encrypted' },
);
export type CaseAddress = Static<typeof CaseAddress>;

export const CaseClaim = Type.Object(
  {
    hovedstolOere: Type.Integer({ minimum: 1, maximum: 100_000_000_000, description: 'Principal in øre, 1..100000000000' }),
    forfaldsdato: Type.String({ format: 'date', description: "Due date, YYYY-MM-DD: before the organisation's today and less than 3 years before it" }),
    fakturadato: Type.Optional(DateString),
    beskrivelse: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: 'Stored encrypted' })),
  },
  { additionalProperties: false, title: 'CaseClaim', description: 'A claim (fordring)' },
);
export type CaseClaim = Static<typeof CaseClaim>;

export const CaseDebtor = Type.Object(
  {
    skyldnerType: Type.Union([Type.Literal('person'), Type.Literal('virksomhed')]),
    navn: Type.String({ minLength: 1, maxLength: 200, description: 'Stored encrypted' }),
    cvr: Type.Optional(Type.String({ pattern: '^[0-9]{8}$', description: 'CVR number, exactly 8 digits' })),
    cpr: Type.Optional(
      Type.String({
        maxLength: 64,
        writeOnly: true,
        description: 'CPR number: write-only. Stored encrypted, never returned, logged or evented; only the collection partner receives it',
      }),
    ),
    adresse: Type.Optional(CaseAddress),
    email: Type.Optional(Email),
    mobil: Type.Optional(Type.String({ maxLength: 20, description: 'Mobile number (stored encrypted)' })),
  },
  { additionalProperties: false, title: 'CaseDebtor', description: 'A debtor (skyldner)' },
);
export type CaseDebtor = Static<typeof CaseDebtor>;

export const CaseCreate = Type.Object(
  {
    fordringer: Type.Array(CaseClaim, { minItems: 1, maxItems: 50, description: '1..50 claims' }),
    skyldnere: Type.Array(CaseDebtor, { minItems: 1, maxItems: 20, description: '1..20 debtors' }),
    externalReference: Type.String({
      minLength: 1,
      maxLength: 120,
      description: 'Your own id of the case, unique per organisation: the same value with the same body is a replay, with another body 409 case_conflict',
    }),
  },
  { additionalProperties: false, title: 'CaseCreate' },
);
export type CaseCreate = Static<typeof CaseCreate>;

export const CaseStateSchema = Type.Union(
  [Type.Literal('OPRETTET'), Type.Literal('PAAKRAV_SENDT'), Type.Literal('OVERDRAGET'), Type.Literal('AFSLUTTET'), Type.Literal('TILBAGEKALDT')],
  { title: 'CaseState', description: 'OPRETTET → PAAKRAV_SENDT → OVERDRAGET → AFSLUTTET; TILBAGEKALDT when withdrawn' },
);

export const CaseStatusFlag = Type.Union([Type.Literal('aktiv'), Type.Literal('afventer'), Type.Literal('lukket')], {
  title: 'CaseStatusFlag',
  description: 'aktiv in OPRETTET and OVERDRAGET, afventer in PAAKRAV_SENDT, lukket in AFSLUTTET and TILBAGEKALDT',
});

/** The case status object of create, replay and read: no personal data. */
export const CaseStatusView = Type.Object(
  {
    id: Uuid,
    caseNumber: Type.Integer({ minimum: 1, description: 'Per organisation, 1, 2, 3… without gaps' }),
    externalReference: Nullable(Type.String()),
    fakturaId: Nullable(Type.String({ format: 'uuid', description: 'The invoice of a case created by collecting it; null for a case from POST /v1/cases' })),
    state: CaseStateSchema,
    status: CaseStatusFlag,
    paakravFrist: Nullable(Type.String({ format: 'date', description: 'The demand letter deadline (påkrav date + 10 days), YYYY-MM-DD, once sent' })),
    eventVersion: Type.Integer({ minimum: 1, description: "How many sag.* events the case has had (1 after sag.oprettet)" }),
    createdAt: DateTimeString,
    updatedAt: DateTimeString,
  },
  { title: 'CaseStatus', description: 'A collection case as integrators see it: no personal data' },
);
export type CaseStatusView = Static<typeof CaseStatusView>;

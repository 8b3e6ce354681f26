import { Type, type Static } from 'typebox';
import { DateTimeString, Email, ListQuery, Metadata, Nullable, Uuid } from './common.ts';

export const Address = Type.Object(
  {
    street: Type.Optional(Type.String({ maxLength: 200 })),
    postalCode: Type.Optional(Type.String({ maxLength: 10 })),
    city: Type.Optional(Type.String({ maxLength: 100 })),
    country: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false, title: 'Address' },
);
export type Address = Static<typeof Address>;

const Cvr = Type.String({ pattern: '^[0-9]{8}$', description: 'CVR number, exactly 8 digits' });

/** The e-invoice address and VAT number (docs/einvoicing.md); check digits and scheme rules are checked beyond the pattern. */
const Ean = Type.String({
  pattern: '^[0-9]{13}$',
  description: 'GLN ("EAN number") of an e-invoice receiver: 13 digits, the last the GS1 check digit of the first 12. Takes precedence over peppolId (scheme 0088).',
});
const PeppolId = Type.String({
  pattern: '^[0-9]{4}:[A-Za-z0-9.-]{1,50}$',
  description:
    'Peppol participant id "<scheme>:<identifier>": 0184 a CVR (8 digits or DK + 8 digits), 0088 a GLN with its check digit, ' +
    '0198 DK + 8 digits; other schemes 1..50 characters of A-Z, a-z, 0-9, "." and "-"',
});
const VatNumber = Type.String({
  pattern: '^[A-Z]{2}[A-Z0-9]{2,13}$',
  description: 'EU VAT number: country prefix and 2..13 capital letters or digits (a Danish company without one is DK + its CVR)',
});

/** The writable customer fields; create requires `type` and `name`, PATCH requires nothing. */
const customerFields = {
  type: Type.Union([Type.Literal('person'), Type.Literal('company')]),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  cvr: Type.Optional(Nullable(Cvr)),
  address: Type.Optional(Nullable(Address)),
  email: Type.Optional(Nullable(Email)),
  phone: Type.Optional(Nullable(Type.String({ maxLength: 30, description: 'Stored encrypted' }))),
  contactPerson: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  language: Type.Optional(Nullable(Type.Union([Type.Literal('da'), Type.Literal('en')]))),
  externalReference: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
  metadata: Type.Optional(Nullable(Metadata)),
  ean: Type.Optional(Nullable(Ean)),
  peppolId: Type.Optional(Nullable(PeppolId)),
  vatNumber: Type.Optional(Nullable(VatNumber)),
};

export const CustomerCreate = Type.Object(customerFields, { additionalProperties: false, title: 'CustomerCreate' });
export type CustomerCreate = Static<typeof CustomerCreate>;

export const CustomerPatch = Type.Object(
  {
    ...customerFields,
    type: Type.Optional(customerFields.type),
    name: Type.Optional(customerFields.name),
  },
  { additionalProperties: false, title: 'CustomerPatch', description: 'Partial update: omitted fields are kept, null clears' },
);
export type CustomerPatch = Static<typeof CustomerPatch>;

export const Customer = Type.Object(
  {
    id: Uuid,
    type: Type.Union([Type.Literal('person'), Type.Literal('company')]),
    name: Type.String(),
    cvr: Nullable(Type.String()),
    address: Nullable(Address),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    contactPerson: Nullable(Type.String()),
    language: Nullable(Type.Union([Type.Literal('da'), Type.Literal('en')])),
    externalReference: Nullable(Type.String()),
    metadata: Nullable(Metadata),
    ean: Nullable(Type.String()),
    peppolId: Nullable(Type.String()),
    vatNumber: Nullable(Type.String()),
    hasCpr: Type.Boolean({ description: 'Whether a CPR number is on file; the number itself is never readable' }),
    createdAt: DateTimeString,
    updatedAt: DateTimeString,
  },
  { title: 'Customer' },
);
export type Customer = Static<typeof Customer>;

export const CustomerListQuery = Type.Object(
  {
    cvr: Type.Optional(Type.String({ minLength: 1, maxLength: 8 })),
    email: Type.Optional(Type.String({ minLength: 1, maxLength: 254 })),
    externalReference: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    pastDue: Type.Optional(
      Type.Boolean({ description: "true: only customers whose balance is past due (the organisation's thresholds); false: only the others" }),
    ),
    ...ListQuery,
  },
  { additionalProperties: false },
);
export type CustomerListQuery = Static<typeof CustomerListQuery>;

export const DepartmentCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    contactPerson: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    reference: Type.Optional(Nullable(Type.String({ maxLength: 140 }))),
    email: Type.Optional(Nullable(Email)),
    sortOrder: Type.Optional(Type.Integer({ minimum: 0, maximum: 9999 })),
  },
  { additionalProperties: false, title: 'DepartmentCreate' },
);
export type DepartmentCreate = Static<typeof DepartmentCreate>;

export const Department = Type.Object(
  {
    id: Uuid,
    customerId: Uuid,
    name: Type.String(),
    contactPerson: Nullable(Type.String()),
    reference: Nullable(Type.String()),
    email: Nullable(Type.String()),
    sortOrder: Type.Integer(),
    createdAt: DateTimeString,
  },
  { title: 'Department' },
);
export type Department = Static<typeof Department>;

export const DepartmentListQuery = Type.Object({ ...ListQuery }, { additionalProperties: false });

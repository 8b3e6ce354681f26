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

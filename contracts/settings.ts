import { Type, type Static } from 'typebox';
import { Uuid } from './common.ts';

const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);

export const Settings = Type.Object(
  {
    organizationId: Uuid,
    name: Type.String(),
    cvr: Nullable(Type.String({ description: '8 digits' })),
    address: Type.Object(
      {
        street: Nullable(Type.String()),
        postalCode: Nullable(Type.String()),
        city: Nullable(Type.String()),
        country: Nullable(Type.String({ description: 'ISO 3166-1 alpha-2: `DK` once any part of the address is set' })),
      },
      { description: 'Always an object with every key; null where unset' },
    ),
    email: Nullable(Type.String()),
    bank: Type.Object(
      { reg: Nullable(Type.String({ description: '4 digits' })), account: Nullable(Type.String({ description: '1..10 digits' })) },
      { description: 'Always an object with both keys; null where unset' },
    ),
    fiCreditorNumber: Nullable(
      Type.String({
        description:
          'The FI creditor number (8 digits, the first an 8), set by the operator; invoices issued while it is set carry an FI-kort +71 payment id (`fik`). Null when unset',
      }),
    ),
    sandbox: Type.Boolean(),
    plan: Type.Union([Type.Literal('standard'), Type.Literal('pro')]),
    defaultPaymentTermsDays: Type.Integer(),
    pastDue: Type.Object({ minOere: Type.Integer(), minDays: Type.Integer() }, { description: "When a customer's balance is pastDue" }),
    verification: Type.Union([Type.Literal('unverified'), Type.Literal('pending'), Type.Literal('verified')]),
  },
  { title: 'Settings' },
);
export type Settings = Static<typeof Settings>;

import { Type, type Static } from 'typebox';
import { ListQuery, Uuid } from './common.ts';

export const Settlement = Type.Object(
  {
    id: Uuid,
    payoutDate: Type.String({ format: 'date', description: 'The business day the net amount is paid out' }),
    periodStart: Type.String({ format: 'date', description: 'First payment date covered' }),
    periodEnd: Type.String({ format: 'date', description: 'Last payment date covered (the business day settled)' }),
    grossOere: Type.Integer(),
    feeOere: Type.Integer({ description: 'Sum of the per-payment fees, each rounded half away from zero' }),
    netOere: Type.Integer({ description: 'grossOere − feeOere' }),
    paymentCount: Type.Integer(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('held'), Type.Literal('paid')]),
  },
  { title: 'Settlement' },
);
export type Settlement = Static<typeof Settlement>;

export const SettlementListQuery = Type.Object(
  {
    ...ListQuery,
    from: Type.Optional(Type.String({ format: 'date', description: 'Only payouts on or after this date' })),
    to: Type.Optional(Type.String({ format: 'date', description: 'Only payouts on or before this date' })),
  },
  { additionalProperties: false },
);
export type SettlementListQuery = Static<typeof SettlementListQuery>;

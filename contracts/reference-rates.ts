import { Type, type Static } from 'typebox';
import { ListQuery } from './common.ts';

export const ReferenceRate = Type.Object(
  {
    from: Type.String({ format: 'date', description: 'The first day of the half-year (1 January or 1 July) from which the rate is in force' }),
    referenceRateBp: Type.Integer({ description: "Nationalbanken's reference rate, in basis points (160 = 1.60 %)" }),
    statutoryRateBp: Type.Integer({ description: 'The statutory late-payment interest rate (renteloven § 5): reference + 800 basis points' }),
  },
  { title: 'ReferenceRate' },
);
export type ReferenceRate = Static<typeof ReferenceRate>;

export const ReferenceRateListQuery = Type.Object({ ...ListQuery }, { additionalProperties: false });
export type ReferenceRateListQuery = Static<typeof ReferenceRateListQuery>;

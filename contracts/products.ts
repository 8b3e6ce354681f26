import { Type, type Static } from 'typebox';
import { DateTimeString, ListQuery, Nullable, Uuid, VatExemptionReason } from './common.ts';

/**
 * The writable product fields (docs/api-conventions.md, "Customers, departments, products, accounts"); create requires
 * sku, name, unitPriceOere and vatRateBps.
 */
const productFields = {
  sku: Type.String({ minLength: 1, maxLength: 60, description: 'Stock-keeping unit, unique per organisation regardless of case' }),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  unitPriceOere: Type.Integer({ minimum: 0, maximum: 100000000000, description: 'Unit price excluding VAT, in øre' }),
  vatRateBps: Type.Integer({ minimum: 0, maximum: 10000, description: 'VAT rate in basis points (2500 = 25 %)' }),
  vatExemptionReason: Type.Optional(Nullable(VatExemptionReason)),
  account: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 999999999, description: 'Bookkeeping account number' }))),
};

export const ProductCreate = Type.Object(productFields, {
  additionalProperties: false,
  title: 'ProductCreate',
  description: 'vatRateBps 0 requires vatExemptionReason.',
});
export type ProductCreate = Static<typeof ProductCreate>;

export const ProductPatch = Type.Object(
  {
    sku: Type.Optional(productFields.sku),
    name: Type.Optional(productFields.name),
    unitPriceOere: Type.Optional(productFields.unitPriceOere),
    vatRateBps: Type.Optional(productFields.vatRateBps),
    vatExemptionReason: productFields.vatExemptionReason,
    account: productFields.account,
    active: Type.Optional(Type.Boolean({ description: 'false deactivates the product; products are never deleted' })),
  },
  {
    additionalProperties: false,
    title: 'ProductPatch',
    description:
      'Partial update: omitted fields are kept, null clears a nullable field. The VAT rule is checked on the result.',
  },
);
export type ProductPatch = Static<typeof ProductPatch>;

export const Product = Type.Object(
  {
    id: Uuid,
    sku: Type.String(),
    name: Type.String(),
    unitPriceOere: Type.Integer(),
    vatRateBps: Type.Integer(),
    vatExemptionReason: Nullable(VatExemptionReason),
    account: Nullable(Type.Integer()),
    active: Type.Boolean(),
    createdAt: DateTimeString,
    updatedAt: DateTimeString,
  },
  { title: 'Product' },
);
export type Product = Static<typeof Product>;

export const ProductListQuery = Type.Object(
  {
    sku: Type.Optional(Type.String({ minLength: 1, maxLength: 60, description: 'Exact SKU, case-insensitive' })),
    active: Type.Optional(Type.Boolean({ description: 'true: only active products; false: only deactivated ones' })),
    ...ListQuery,
  },
  { additionalProperties: false },
);
export type ProductListQuery = Static<typeof ProductListQuery>;

export const AccountCreate = Type.Object(
  {
    accountNumber: Type.String({ minLength: 1, maxLength: 20, description: 'Unique per organisation' }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false, title: 'AccountCreate' },
);
export type AccountCreate = Static<typeof AccountCreate>;

export const Account = Type.Object(
  {
    id: Uuid,
    accountNumber: Type.String(),
    name: Type.String(),
    active: Type.Boolean(),
    createdAt: DateTimeString,
  },
  { title: 'Account', description: 'Sales account' },
);
export type Account = Static<typeof Account>;

export const AccountListQuery = Type.Object(
  {
    active: Type.Optional(Type.Boolean({ description: 'true: only active accounts; false: only inactive ones' })),
    ...ListQuery,
  },
  { additionalProperties: false },
);
export type AccountListQuery = Static<typeof AccountListQuery>;

import postgres from 'postgres';
import type { Account, Product } from '../../contracts/products.ts';
import { DomainError } from '../shared/errors.ts';

type VatExemptionReason = NonNullable<Product['vatExemptionReason']>;

/** The columns every product read selects, and how a row becomes the API shape. */
export interface ProductRow {
  id: string;
  sku: string;
  name: string;
  unit_price_oere: number;
  vat_rate_bps: number;
  vat_exemption_reason: VatExemptionReason | null;
  account: number | null;
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

export const PRODUCT_COLUMNS = [
  'id', 'sku', 'name', 'unit_price_oere', 'vat_rate_bps', 'vat_exemption_reason', 'account', 'active',
  'created_at', 'updated_at',
] as const;

export function toProduct(r: ProductRow): Product {
  return {
    id: r.id,
    sku: r.sku,
    name: r.name,
    unitPriceOere: r.unit_price_oere,
    vatRateBps: r.vat_rate_bps,
    vatExemptionReason: r.vat_exemption_reason,
    account: r.account,
    active: r.active,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

export interface AccountRow {
  id: string;
  account_number: string;
  name: string;
  active: boolean;
  created_at: Date;
}

export const ACCOUNT_COLUMNS = ['id', 'account_number', 'name', 'active', 'created_at'] as const;

export function toAccount(r: AccountRow): Account {
  return { id: r.id, accountNumber: r.account_number, name: r.name, active: r.active, createdAt: r.created_at.toISOString() };
}

/**
 * A zero rate is only lawful with a stated exemption (it is printed on the invoice): `vatRateBps` 0 requires
 * `vatExemptionReason` (docs/api-conventions.md, "Customers, departments, products, accounts"). That is the whole rule
 * for a product; a reason kept beside a taxed rate is stored as given. Checked on the product as it will be stored, so
 * a PATCH cannot get around it.
 */
export function assertVatConsistent(vatRateBps: number, reason: VatExemptionReason | null): void {
  if (vatRateBps === 0 && reason === null) {
    throw new DomainError('vat_exemption_reason_required', 'A product with vatRateBps 0 needs a vatExemptionReason.', {
      details: [{ path: '/vatExemptionReason', message: 'is required when vatRateBps is 0' }],
    });
  }
}

/**
 * Uniqueness is left to the database's unique index: a pre-check would race with a concurrent insert. The failed
 * statement aborts the transaction, which is what we want: the DomainError rolls it back.
 */
export const isUniqueViolation = (err: unknown, index: string): boolean =>
  err instanceof postgres.PostgresError && err.code === '23505' && err.constraint_name === index;

export const skuTaken = (sku: string): DomainError =>
  new DomainError('sku_already_exists', `Another product already uses the SKU "${sku}" (SKUs are compared without regard to case).`, {
    details: [{ path: '/sku', message: 'is already used by another product' }],
  });

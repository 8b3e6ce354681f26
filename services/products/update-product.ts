import type { Product, ProductPatch } from '../../contracts/products.ts';
import type { Tx } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { assertVatConsistent, isUniqueViolation, PRODUCT_COLUMNS, skuTaken, toProduct, type ProductRow } from './product-queries.ts';

const FIELDS = {
  sku: 'sku',
  name: 'name',
  unitPriceOere: 'unit_price_oere',
  vatRateBps: 'vat_rate_bps',
  vatExemptionReason: 'vat_exemption_reason',
  account: 'account',
  active: 'active',
} as const satisfies Record<keyof ProductPatch, string>;

/**
 * PATCH semantics: an omitted field is kept, `null` clears a nullable field. The VAT rule holds for the merged
 * product, so the row is locked while it is read: a concurrent PATCH of the other half (rate vs. reason) waits
 * and is then checked against this one's result. Needs a transaction for the lock to mean anything.
 */
export async function updateProduct(tx: Tx, organizationId: string, id: string, patch: ProductPatch): Promise<Product> {
  if (!isUuid(id)) throw notFound('product_not_found', 'product');
  const [current] = await tx<Pick<ProductRow, 'vat_rate_bps' | 'vat_exemption_reason'>[]>`
    SELECT vat_rate_bps, vat_exemption_reason FROM products
    WHERE organization_id = ${organizationId} AND id = ${id}
    FOR UPDATE`;
  if (!current) throw notFound('product_not_found', 'product');
  // Partial: what the PATCH leaves out is kept, and the rule is checked on the product as it will be stored.
  assertVatConsistent(
    patch.vatRateBps ?? current.vat_rate_bps,
    patch.vatExemptionReason !== undefined ? patch.vatExemptionReason : current.vat_exemption_reason,
  );
  // The database's clock, like created_at: the two are compared, so they must not come from different machines.
  const set: Record<string, unknown> = { updated_at: tx`now()` };
  for (const [field, column] of Object.entries(FIELDS)) {
    const value = patch[field as keyof ProductPatch];
    if (value !== undefined) set[column] = value;
  }
  try {
    const [row] = await tx<ProductRow[]>`
      UPDATE products SET ${tx(set)}
      WHERE organization_id = ${organizationId} AND id = ${id}
      RETURNING ${tx(PRODUCT_COLUMNS)}`;
    return toProduct(row!);
  } catch (err) {
    if (patch.sku !== undefined && isUniqueViolation(err, 'products_org_sku')) throw skuTaken(patch.sku);
    throw err;
  }
}

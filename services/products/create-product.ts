import type { Product, ProductCreate } from '../../contracts/products.ts';
import type { Queryable } from '../shared/db.ts';
import { uuidv7 } from '../shared/ids.ts';
import { assertVatConsistent, isUniqueViolation, PRODUCT_COLUMNS, skuTaken, toProduct, type ProductRow } from './product-queries.ts';

export async function createProduct(sql: Queryable, organizationId: string, input: ProductCreate): Promise<Product> {
  const reason = input.vatExemptionReason ?? null;
  assertVatConsistent(input.vatRateBps, reason);
  const row = {
    id: uuidv7(),
    organization_id: organizationId,
    sku: input.sku,
    name: input.name,
    unit_price_oere: input.unitPriceOere,
    vat_rate_bps: input.vatRateBps,
    vat_exemption_reason: reason,
    account: input.account ?? null,
  };
  try {
    const [created] = await sql<ProductRow[]>`
      INSERT INTO products ${sql(row as Record<string, unknown>)} RETURNING ${sql(PRODUCT_COLUMNS)}`;
    return toProduct(created!);
  } catch (err) {
    if (isUniqueViolation(err, 'products_org_sku')) throw skuTaken(input.sku);
    throw err;
  }
}

import type { Product } from '../../contracts/products.ts';
import type { Queryable } from '../shared/db.ts';
import { notFound } from '../shared/errors.ts';
import { isUuid } from '../shared/ids.ts';
import { PRODUCT_COLUMNS, toProduct, type ProductRow } from './product-queries.ts';

/** Another organisation's product is indistinguishable from one that does not exist. */
export async function getProduct(sql: Queryable, organizationId: string, id: string): Promise<Product> {
  if (!isUuid(id)) throw notFound('product_not_found', 'product');
  const [row] = await sql<ProductRow[]>`
    SELECT ${sql(PRODUCT_COLUMNS)} FROM products WHERE organization_id = ${organizationId} AND id = ${id}`;
  if (!row) throw notFound('product_not_found', 'product');
  return toProduct(row);
}

import type { Product, ProductListQuery } from '../../contracts/products.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { PRODUCT_COLUMNS, toProduct, type ProductRow } from './product-queries.ts';

/**
 * Newest first, keyset on the time-ordered id. The SKU filter compares lower(sku) so that it matches the way
 * uniqueness is defined and uses the products_org_sku index.
 */
export async function listProducts(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  q: ProductListQuery,
): Promise<{ items: Product[]; nextCursor: string | null }> {
  const limit = q.limit ?? 50;
  const scope: CursorScope = { organizationId, list: 'products', filters: [q.sku ?? null, q.active ?? null] };
  const after = q.cursor !== undefined ? (decodeCursor(keyring, scope, q.cursor)[0] as string) : null;
  const rows = await sql<ProductRow[]>`
    SELECT ${sql(PRODUCT_COLUMNS)}
    FROM products
    WHERE organization_id = ${organizationId}
      ${q.sku !== undefined ? sql`AND lower(sku) = lower(${q.sku})` : sql``}
      ${q.active !== undefined ? sql`AND active = ${q.active}` : sql``}
      ${after ? sql`AND id < ${after}` : sql``}
    ORDER BY id DESC
    LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.id]));
  return { items: items.map(toProduct), nextCursor };
}

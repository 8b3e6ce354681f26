import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope } from '../../../../contracts/common.ts';
import { Product, ProductCreate, ProductListQuery, ProductPatch } from '../../../../contracts/products.ts';
import { createProduct } from '../../../products/create-product.ts';
import { getProduct } from '../../../products/get-product.ts';
import { listProducts } from '../../../products/list-products.ts';
import { updateProduct } from '../../../products/update-product.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const ProductParams = Type.Object({ productId: Type.String({ description: 'Product id (UUID)' }) }, { additionalProperties: false });
const tags = ['Products'];

export function productRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db, keyring } = deps;

  app.get<{ Querystring: ProductListQuery }>(
    '/products',
    {
      config: { scope: 'products:read' },
      schema: {
        summary: 'List products, newest first',
        description: '`sku` is an exact match without regard to case. `active=true` lists only active products, `active=false` only deactivated ones.',
        tags,
        querystring: ProductListQuery,
        response: { 200: ListEnvelope(Product) },
      },
    },
    async (req) => {
      const { items, nextCursor } = await db.read((sql) => listProducts(sql, keyring, req.auth.organizationId, req.query));
      return { data: items, meta: { nextCursor } };
    },
  );

  app.post<{ Body: ProductCreate }>(
    '/products',
    {
      config: { scope: 'products:write' },
      schema: {
        summary: 'Create a product',
        description:
          'The SKU must be unique in the organisation without regard to case (409 `sku_already_exists`). ' +
          'vatRateBps 0 needs a vatExemptionReason (422 `vat_exemption_reason_required`).',
        tags,
        body: ProductCreate,
        response: { 201: Envelope(Product) },
      },
    },
    (req, reply) =>
      mutate(deps, req, reply, async (tx) => {
        const product = await createProduct(tx, req.auth.organizationId, req.body);
        return { status: 201, data: product, location: `/v1/products/${product.id}` };
      }),
  );

  app.get<{ Params: { productId: string } }>(
    '/products/:productId',
    {
      config: { scope: 'products:read' },
      schema: { summary: 'Get a product', tags, params: ProductParams, response: { 200: Envelope(Product) } },
    },
    async (req) => ({
      data: await db.read((sql) => getProduct(sql, req.auth.organizationId, req.params.productId)),
      meta: {},
    }),
  );

  app.patch<{ Params: { productId: string }; Body: ProductPatch }>(
    '/products/:productId',
    {
      config: { scope: 'products:write' },
      schema: {
        summary: 'Update a product (partial)',
        description:
          'Omitted fields are kept, `null` clears vatExemptionReason or account. The VAT rule is checked on the ' +
          'product as it would be after the update. Products are never deleted: `{"active": false}` deactivates one.',
        tags,
        params: ProductParams,
        body: ProductPatch,
        response: { 200: Envelope(Product) },
      },
    },
    (req, reply) =>
      mutate(deps, req, reply, async (tx) => ({
        status: 200,
        data: await updateProduct(tx, req.auth.organizationId, req.params.productId, req.body),
      })),
  );
}

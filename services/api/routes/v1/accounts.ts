import type { FastifyInstance } from 'fastify';
import { Envelope, ListEnvelope } from '../../../../contracts/common.ts';
import { Account, AccountCreate, AccountListQuery } from '../../../../contracts/products.ts';
import { createAccount } from '../../../products/create-account.ts';
import { listAccounts } from '../../../products/list-accounts.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const tags = ['Sales accounts'];

export function accountRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db, keyring } = deps;

  app.get<{ Querystring: AccountListQuery }>(
    '/accounts',
    {
      config: { scope: 'products:read' },
      schema: {
        summary: 'List sales accounts by account number',
        description: '`active=true` lists only active accounts, `active=false` only inactive ones.',
        tags,
        querystring: AccountListQuery,
        response: { 200: ListEnvelope(Account) },
      },
    },
    async (req) => {
      const { items, nextCursor } = await db.read((sql) => listAccounts(sql, keyring, req.auth.organizationId, req.query));
      return { data: items, meta: { nextCursor } };
    },
  );

  app.post<{ Body: AccountCreate }>(
    '/accounts',
    {
      config: { scope: 'products:write' },
      schema: {
        summary: 'Create a sales account',
        description:
          'The account number must be unique in the organisation (409 `account_number_already_exists`). ' +
          'Answers 201 without a Location header: sales accounts have no read-by-id route.',
        tags,
        body: AccountCreate,
        response: { 201: Envelope(Account) },
      },
    },
    (req, reply) =>
      mutate(deps, req, reply, async (tx) => ({
        status: 201,
        data: await createAccount(tx, req.auth.organizationId, req.body),
      })),
  );
}

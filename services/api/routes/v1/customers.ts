import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope } from '../../../../contracts/common.ts';
import {
  Customer,
  CustomerCreate,
  CustomerListQuery,
  CustomerPatch,
  Department,
  DepartmentCreate,
  DepartmentListQuery,
} from '../../../../contracts/customers.ts';
import { CustomerBalance } from '../../../../contracts/payments.ts';
import { addCustomer } from '../../../customers/add-customer.ts';
import { getCustomer } from '../../../customers/get-customer.ts';
import { listCustomers } from '../../../customers/list-customers.ts';
import { updateCustomer } from '../../../customers/update-customer.ts';
import { createDepartment } from '../../../customers/create-department.ts';
import { listDepartments } from '../../../customers/list-departments.ts';
import { deleteDepartment } from '../../../customers/delete-department.ts';
import { getCustomerBalance } from '../../../customers/get-customer-balance.ts';
import { mutate } from '../../idempotency.ts';
import { customerPageJson } from './customer-page-json.ts';
import type { AppDeps } from '../../app.ts';

const CustomerParams = Type.Object({ customerId: Type.String({ description: 'Customer id (UUID)' }) }, { additionalProperties: false });
const DepartmentParams = Type.Object(
  { customerId: Type.String({ description: 'Customer id (UUID)' }), departmentId: Type.String({ description: 'Department id (UUID)' }) },
  { additionalProperties: false },
);
const tags = ['Customers'];

export function customerRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db, keyring } = deps;

  app.get<{ Querystring: CustomerListQuery }>(
    '/customers',
    {
      config: { scope: 'customers:read' },
      schema: {
        summary: 'List customers, newest first',
        description:
          'Filters are exact matches. `email` is matched through a keyed hash; there is no free-text search. ' +
          '`pastDue=true` lists only customers whose balance is past due today (the same computation as the balance route), ' +
          '`pastDue=false` only the others.',
        tags,
        querystring: CustomerListQuery,
        response: { 200: ListEnvelope(Customer) },
      },
    },
    async (req, reply) => {
      const org = req.auth.organizationId;
      const today = req.query.pastDue === undefined ? undefined : await deps.clock.today(org);
      const { items, nextCursor } = await db.read((sql) => listCustomers(sql, keyring, org, req.query, today));
      const page = { data: items, meta: { nextCursor } };
      // The same bytes as the response schema writes, cheaper; a page it does not vouch for goes through the schema.
      const json = customerPageJson(page);
      return json === undefined ? page : reply.type('application/json; charset=utf-8').send(json);
    },
  );

  app.post<{ Body: CustomerCreate }>(
    '/customers',
    {
      config: { scope: 'customers:write' },
      schema: { summary: 'Create a customer', tags, body: CustomerCreate, response: { 201: Envelope(Customer) } },
    },
    (req, reply) => mutate(deps, req, reply, addCustomer(keyring, req.auth.organizationId, req.body)),
  );

  app.get<{ Params: { customerId: string } }>(
    '/customers/:customerId',
    {
      config: { scope: 'customers:read' },
      schema: { summary: 'Get a customer', tags, params: CustomerParams, response: { 200: Envelope(Customer) } },
    },
    async (req) => ({
      data: await db.read((sql) => getCustomer(sql, keyring, req.auth.organizationId, req.params.customerId)),
      meta: {},
    }),
  );

  app.patch<{ Params: { customerId: string }; Body: CustomerPatch }>(
    '/customers/:customerId',
    {
      config: { scope: 'customers:write' },
      schema: {
        summary: 'Update a customer (partial)',
        description: 'Omitted fields are kept, `null` clears a field, a value replaces it (objects as a whole). Last write wins.',
        tags,
        params: CustomerParams,
        body: CustomerPatch,
        response: { 200: Envelope(Customer) },
      },
    },
    (req, reply) =>
      mutate(deps, req, reply, async (tx) => ({
        status: 200,
        data: await updateCustomer(tx, keyring, req.auth.organizationId, req.params.customerId, req.body),
      })),
  );

  app.get<{ Params: { customerId: string } }>(
    '/customers/:customerId/balance',
    {
      config: { scope: 'customers:read' },
      schema: {
        summary: "The customer's balance, computed now",
        description:
          "Computed on every read from the customer's invoices, credit notes, fees and payments with the organisation's today: " +
          'never stored. `pastDue` is true when `overdueOere` and `daysOverdue` both reach the organisation\'s thresholds ' +
          '(default 10 000 øre and 14 days). `creditOere` (≤ 0) sums the negative invoice balances: overpayments and credits.',
        tags,
        params: CustomerParams,
        response: { 200: Envelope(CustomerBalance) },
      },
    },
    async (req) => ({
      data: await db.read((sql) => getCustomerBalance(sql, deps, req.auth.organizationId, req.params.customerId)),
      meta: {},
    }),
  );

  app.get<{ Params: { customerId: string }; Querystring: { limit?: number; cursor?: string } }>(
    '/customers/:customerId/departments',
    {
      config: { scope: 'customers:read' },
      schema: {
        summary: "List a customer's departments",
        description: 'Ordered by sortOrder, then name.',
        tags,
        params: CustomerParams,
        querystring: DepartmentListQuery,
        response: { 200: ListEnvelope(Department) },
      },
    },
    async (req) => {
      const { items, nextCursor } = await db.read((sql) =>
        listDepartments(sql, keyring, req.auth.organizationId, req.params.customerId, req.query),
      );
      return { data: items, meta: { nextCursor } };
    },
  );

  app.post<{ Params: { customerId: string }; Body: DepartmentCreate }>(
    '/customers/:customerId/departments',
    {
      config: { scope: 'customers:write' },
      schema: { summary: 'Add a department to a customer', tags, params: CustomerParams, body: DepartmentCreate, response: { 201: Envelope(Department) } },
    },
    (req, reply) =>
      mutate(deps, req, reply, async (tx) => ({
        status: 201,
        data: await createDepartment(tx, keyring, req.auth.organizationId, req.params.customerId, req.body),
      })),
  );

  app.delete<{ Params: { customerId: string; departmentId: string } }>(
    '/customers/:customerId/departments/:departmentId',
    {
      config: { scope: 'customers:write' },
      schema: {
        summary: 'Delete a department',
        description: 'Idempotent: deleting an already deleted department answers 204 again.',
        tags,
        params: DepartmentParams,
        response: { 204: Type.Null({ description: 'Deleted' }) },
      },
    },
    (req, reply) =>
      mutate(deps, req, reply, async (tx) => {
        await deleteDepartment(tx, req.auth.organizationId, req.params.customerId, req.params.departmentId);
        return { status: 204 };
      }),
  );
}

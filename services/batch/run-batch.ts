import type { FastifyBaseLogger } from 'fastify';
import type { ErrorObject } from 'ajv';
import { Type, type TSchema } from 'typebox';
import { BATCH_OPS, type BatchOp, type BatchResultItem } from '../../contracts/batch.ts';
import { CustomerCreate } from '../../contracts/customers.ts';
import { InvoiceCreate } from '../../contracts/invoices.ts';
import { PaymentCreate } from '../../contracts/payments.ts';
import type { Scope } from '../../contracts/scopes.ts';
import { DomainError } from '../shared/errors.ts';
import { errorBody, validationFailure } from '../shared/error-envelope.ts';
import { createValidatorCompiler } from '../shared/schema-validator.ts';
import { requestFingerprint } from '../idempotency/request-fingerprint.ts';
import { runMutation, type MutationAnswer, type MutationDeps, type MutationUseCase } from '../idempotency/run-mutation.ts';
import { addCustomer } from '../customers/add-customer.ts';
import { createAndIssueInvoice } from '../invoices/create-and-issue-invoice.ts';
import type { IssueProtocolDeps } from '../invoices/issue-protocol.ts';
import { registerPayment, type PaymentRegistrationDeps } from '../payments/register-payment.ts';

/**
 * POST /v1/batch (docs/api-conventions.md, "Batch"). Each operation is the single call it stands for: the single
 * route's schema (the same compiled validator, so the same messages and pointers), its scope, its use case, each in its
 * own transaction and under its own stored response, keyed `<Idempotency-Key>:<index>` with the single call's
 * fingerprint. A batch that crashes midway has stored the operations it finished; its retry replays those and runs the
 * rest. The batch's own response is stored under the key itself once every operation has an answer.
 */
export interface BatchRequestContext {
  /** The calling key's organisation and scopes: each operation checks its own scope. */
  auth: { organizationId: string; scopes: ReadonlySet<string> };
  key: string;
  /** The fingerprint of the batch request itself. */
  hash: Buffer;
  requestId: string;
  log: FastifyBaseLogger;
}

/** What the batch's operations need: the idempotency rules' and each operation's use case's. */
export type BatchDeps = MutationDeps &
  IssueProtocolDeps &
  PaymentRegistrationDeps & {
    /** Test-only: runs after each operation (a test throws here to crash a batch midway). */
    afterBatchOperation?: ((index: number) => void | Promise<void>) | undefined;
  };

/** What an operation amounts to once its params are checked: the single call's key, fingerprint and use case. */
interface Prepared {
  hash: Buffer;
  useCase: MutationUseCase;
}

const compile = createValidatorCompiler();
const bodyValidator = (schema: TSchema) =>
  compile({ schema, httpPart: 'body', method: 'POST', url: '/v1/batch' }) as ((data: unknown) => boolean) & {
    errors?: ErrorObject[] | null;
  };
const validators = {
  customer: bodyValidator(CustomerCreate),
  invoice: bodyValidator(InvoiceCreate),
  payment: bodyValidator(PaymentCreate),
  // The parts of the params that are a path or query string in the single call: JSON values here, never coerced.
  invoiceFlags: bodyValidator(Type.Object({ issue: Type.Optional(Type.Boolean()), send: Type.Optional(Type.Boolean()) })),
  paymentInvoice: bodyValidator(Type.Object({ invoiceId: Type.String() }, { required: ['invoiceId'] })),
};

const SCOPE_OF: Record<BatchOp, Scope> = {
  'customer.create': 'customers:write',
  'invoice.create': 'invoices:write',
  'payment.register': 'payments:write',
};

/** Errors of several validators over parts of one object, reported together as the single call would. */
function check(parts: [ReturnType<typeof bodyValidator>, unknown][]): void {
  const errors: ErrorObject[] = [];
  for (const [validate, value] of parts) if (!validate(value)) errors.push(...(validate.errors ?? []));
  if (errors.length > 0) throw validationFailure(errors, 'body');
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Splits named properties off an object (the single call's path and query parts), leaving its body. */
function split(params: Record<string, unknown>, names: string[]): [Record<string, unknown>, Record<string, unknown>] {
  const taken: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) (names.includes(k) ? taken : rest)[k] = v;
  return [taken, rest];
}

function prepare(deps: BatchDeps, auth: BatchRequestContext['auth'], op: BatchOp, params: unknown, subKey: string): Prepared {
  const { keyring } = deps;
  const body = params === undefined ? null : params;
  switch (op) {
    case 'customer.create': {
      check([[validators.customer, body]]);
      const input = body as CustomerCreate;
      return { hash: requestFingerprint(keyring, 'POST', '/v1/customers', input), useCase: addCustomer(keyring, auth.organizationId, input) };
    }
    case 'invoice.create': {
      if (!isObject(body)) check([[validators.invoice, body]]);
      const [flags, rest] = split(body as Record<string, unknown>, ['issue', 'send']);
      check([[validators.invoiceFlags, flags], [validators.invoice, rest]]);
      const f = flags as { issue?: boolean; send?: boolean };
      const query = new URLSearchParams();
      if (f.issue !== undefined) query.set('issue', String(f.issue));
      if (f.send !== undefined) query.set('send', String(f.send));
      const url = `/v1/invoices${query.size > 0 ? `?${query.toString()}` : ''}`;
      return { hash: requestFingerprint(keyring, 'POST', url, rest), useCase: createAndIssueInvoice(deps, auth, rest as InvoiceCreate, f) };
    }
    case 'payment.register': {
      if (!isObject(body)) check([[validators.payment, body]]);
      const [path, rest] = split(body as Record<string, unknown>, ['invoiceId']);
      check([[validators.paymentInvoice, path], [validators.payment, rest]]);
      const invoiceId = path.invoiceId as string;
      return {
        hash: requestFingerprint(keyring, 'POST', `/v1/invoices/${encodeURIComponent(invoiceId)}/payments`, rest),
        // The payment is booked on the operation's own key, as a single call with that key would book it.
        useCase: registerPayment(deps, auth.organizationId, invoiceId, rest as PaymentCreate, subKey),
      };
    }
  }
}

/** The checks of one operation that need no database: its shape, its op, the scope, then its params. */
function prepareOperation(deps: BatchDeps, ctx: BatchRequestContext, item: Record<string, unknown>, subKey: string): { op: BatchOp; prepared: Prepared } {
  const extra = Object.keys(item).filter((k) => k !== 'op' && k !== 'params');
  const opValid = typeof item.op === 'string' && (BATCH_OPS as readonly string[]).includes(item.op);
  if (extra.length > 0 || !opValid) {
    const details = [
      ...(opValid ? [] : [{ path: '/op', message: item.op === undefined ? 'is required' : `must be one of: ${BATCH_OPS.join(', ')}` }]),
      ...extra.map((k) => ({ path: `/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, message: 'is not an allowed property' })),
    ];
    throw new DomainError('validation_failed', `${details[0]!.path} ${details[0]!.message}.`, { details });
  }
  const op = item.op as BatchOp;
  const scope = SCOPE_OF[op];
  if (!ctx.auth.scopes.has(scope)) {
    throw new DomainError('insufficient_scope', `This operation requires the ${scope} scope, which the key does not hold.`, {
      details: [{ path: '', message: `required scope: ${scope}` }],
    });
  }
  return { op, prepared: prepare(deps, ctx.auth, op, item.params, subKey) };
}

/** The result item of an operation's answer, stored or fresh: its body's `data` (and `meta`) or `error`. */
function resultOf(index: number, op: string | null, answer: MutationAnswer): BatchResultItem {
  const body = (answer.body === null ? {} : JSON.parse(answer.body)) as { data?: unknown; meta?: Record<string, unknown>; error?: BatchResultItem['error'] };
  if (body.error) return { index, op, status: answer.status, error: body.error };
  const { replayed: _replayed, ...meta } = body.meta ?? {};
  return { index, op, status: answer.status, data: body.data ?? null, ...(Object.keys(meta).length > 0 ? { meta } : {}) };
}

/**
 * A replayed batch's failed operations echo this response's Request-Id in `error.requestId`, as a replayed single
 * call's error does (docs/api-conventions.md, "Idempotency"); the stored response holds the first request's.
 */
function withRequestId(answer: MutationAnswer, requestId: string): MutationAnswer {
  if (answer.body === null) return answer;
  const body = JSON.parse(answer.body) as { data?: { results?: BatchResultItem[] } };
  const results = body.data?.results;
  if (!Array.isArray(results) || !results.some((r) => r.error)) return answer;
  for (const r of results) if (r.error) r.error.requestId = requestId;
  return { ...answer, body: JSON.stringify(body) };
}

/** Thrown by the look-up use case: the batch key has no stored response yet. */
class NotStored extends Error {}

export async function runBatch(deps: BatchDeps, ctx: BatchRequestContext, operations: Record<string, unknown>[]): Promise<MutationAnswer> {
  const org = ctx.auth.organizationId;
  const target = { org, key: ctx.key, hash: ctx.hash, requestId: ctx.requestId, log: ctx.log };
  // A batch answered before (or being answered now under the key's lock) is replayed (or 409) without running anything.
  try {
    return withRequestId(await runMutation(deps, target, () => Promise.reject(new NotStored())), ctx.requestId);
  } catch (err) {
    if (!(err instanceof NotStored)) throw err;
  }

  const results: BatchResultItem[] = [];
  for (const [index, item] of operations.entries()) {
    const subKey = `${ctx.key}:${index}`;
    const opName = typeof item.op === 'string' ? item.op : null;
    try {
      const { prepared } = prepareOperation(deps, ctx, item, subKey);
      const answer = await runMutation(deps, { ...target, key: subKey, hash: prepared.hash }, prepared.useCase);
      results.push(resultOf(index, opName, answer));
    } catch (err) {
      // Another request is running this operation now (the same batch sent twice at once): the batch is in progress.
      if (!(err instanceof DomainError) || err.code === 'idempotency_in_progress') throw err;
      results.push({ index, op: opName, status: err.status, error: errorBody({ id: ctx.requestId }, err).error });
    }
    await deps.afterBatchOperation?.(index);
  }
  return runMutation(deps, target, async () => ({ status: 200, data: { results } }));
}

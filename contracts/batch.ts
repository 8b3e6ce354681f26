import { Type, type Static } from 'typebox';

/** The operations a batch can hold (docs/api-conventions.md, "Batch"). */
export const BATCH_OPS = ['customer.create', 'invoice.create', 'payment.register'] as const;
export type BatchOp = (typeof BATCH_OPS)[number];

export const MAX_BATCH_OPERATIONS = 100;

/**
 * One operation as the batch's schema takes it: any object. What is inside (`op`, `params`) is checked per operation,
 * so that a wrong operation fails alone, in its result, and never the batch.
 */
export const BatchOperation = Type.Object(
  {
    op: Type.Optional(Type.Unknown({ description: '`customer.create`, `invoice.create` or `payment.register`' })),
    params: Type.Optional(
      Type.Unknown({
        description:
          'customer.create: the body of POST /v1/customers. invoice.create: the body of POST /v1/invoices plus optional ' +
          '`issue` and `send` booleans (its query flags). payment.register: `{invoiceId, amountOere, paymentDate}`.',
      }),
    ),
  },
  { additionalProperties: true, title: 'BatchOperation' },
);

export const BatchRequest = Type.Object(
  { operations: Type.Array(BatchOperation, { minItems: 1, maxItems: MAX_BATCH_OPERATIONS }) },
  { additionalProperties: false, title: 'BatchRequest' },
);
export type BatchRequest = Static<typeof BatchRequest>;

export const BatchResultItem = Type.Object(
  {
    index: Type.Integer({ minimum: 0, description: "The operation's position in the request" }),
    op: Type.Union([Type.String(), Type.Null()], { description: 'The operation as given; null when it was not a string' }),
    status: Type.Integer({ description: 'The HTTP status the single call would have answered' }),
    data: Type.Optional(Type.Unknown({ description: "On success: the single call's `data`" })),
    meta: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: "The single call's `meta` when it has any (a payment's `outcome` and `paymentId`, an invoice's `send`)" }),
    ),
    error: Type.Optional(
      Type.Object(
        {
          code: Type.String(),
          message: Type.String(),
          details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
          requestId: Type.String(),
        },
        { description: "On failure: the single call's `error`" },
      ),
    ),
  },
  { title: 'BatchResult' },
);
export type BatchResultItem = Static<typeof BatchResultItem>;

export const BatchResponse = Type.Object(
  {
    data: Type.Object({ results: Type.Array(BatchResultItem) }),
    meta: Type.Object({ replayed: Type.Optional(Type.Boolean()) }, { additionalProperties: true }),
  },
  { title: 'BatchResponse' },
);

import { Type, type Static, type TSchema } from 'typebox';

/** A real calendar date, 'YYYY-MM-DD' (the validator rejects 2026-02-30). */
export const DateString = Type.String({ format: 'date', description: 'Calendar date, YYYY-MM-DD' });
export const DateTimeString = Type.String({ format: 'date-time', description: 'UTC instant, ISO-8601' });
export const Uuid = Type.String({ format: 'uuid', description: 'Resource id (UUID)' });

/**
 * An e-mail address: a string of at most 254 characters (docs/api-conventions.md, "Requests"): no format rule, no
 * normalisation, no deliverability check; it comes back exactly as written. An address the mail server refuses makes a
 * send fail.
 */
export const Email = Type.String({ maxLength: 254, description: 'E-mail address (stored encrypted)' });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * Caller-owned string map. Keys 1..40 characters, values at most 500 characters, at most 50 keys
 * (docs/api-conventions.md, "Requests", Metadata).
 */
export const Metadata = Type.Unsafe<Record<string, string>>({
  type: 'object',
  propertyNames: { minLength: 1, maxLength: 40 },
  additionalProperties: { type: 'string', maxLength: 500 },
  maxProperties: 50,
  title: 'Metadata',
  description: 'String-to-string map: keys 1..40 characters, values up to 500 characters, at most 50 keys',
});

export const VatExemptionReason = Type.Union(
  [Type.Literal('ML13'), Type.Literal('OMVENDT'), Type.Literal('EU_VARE'), Type.Literal('EKSPORT')],
  { title: 'VatExemptionReason', description: 'Why a line carries no VAT; printed on the invoice in the customer\'s language' },
);

export const ListQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Page size, 1..200' })),
  // No length bounds: any text that is not a cursor this API issued (empty, overlong, edited) is 400 invalid_cursor.
  cursor: Type.Optional(Type.String({ description: 'Opaque cursor from meta.nextCursor; anything else is 400 invalid_cursor' })),
};

export const IdParam = (name: string) => Type.Object({ [name]: Uuid }, { additionalProperties: false });

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      details: Type.Optional(
        Type.Array(
          Type.Object({
            path: Type.String(),
            message: Type.String(),
            expectedOere: Type.Optional(Type.Integer({ description: '422 installments_total_mismatch: the amount the instalments must add up to' })),
          }),
        ),
      ),
      requestId: Type.String(),
    }),
  },
  { title: 'Error', description: 'Error envelope' },
);

export const Meta = Type.Object({}, { additionalProperties: true, description: 'Response metadata' });
export const ListMeta = Type.Object(
  { nextCursor: Nullable(Type.String()) },
  { additionalProperties: true },
);

/** `{data, meta}` success envelope around a resource. */
export const Envelope = <T extends TSchema>(data: T) => Type.Object({ data, meta: Meta });
export const ListEnvelope = <T extends TSchema>(item: T) => Type.Object({ data: Type.Array(item), meta: ListMeta });

export type Paginated = Static<typeof ListMeta>;

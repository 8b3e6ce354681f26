import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv, opts?: unknown) => Ajv;

/**
 * Two validators with different manners. Bodies are strict: no coercion, no defaults, no silently removed
 * properties; an unknown property is a 400. Query strings and path parameters arrive as text, so there numbers
 * and booleans are coerced and defaults applied, but unknown parameters are still refused.
 */
function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    coerceTypes: coerce,
    useDefaults: coerce,
    removeAdditional: false,
    allowUnionTypes: true,
  });
  // full mode: dates are checked against the calendar (2026-02-30 is refused), times need an offset.
  addFormats(ajv, { mode: 'full', formats: ['date', 'date-time', 'uuid', 'email', 'uri'] });
  // The proleptic calendar's year 0000 is valid ISO 8601 but no year PostgreSQL stores (1 BC has no year 0 there):
  // refused here as a bad date rather than failing the write. A date-time must also be one JavaScript reads: RFC 3339
  // lets through a leap second (23:59:60) and an offset of hours only (+01), which would become an invalid Date.
  for (const name of ['date', 'date-time'] as const) {
    const format = ajv.formats[name] as { validate: (s: string) => boolean; compare?: (a: string, b: string) => number | undefined };
    ajv.addFormat(name, {
      ...format,
      validate: (s: string) => !s.startsWith('0000') && format.validate(s) && (name === 'date' || !Number.isNaN(Date.parse(s))),
    });
  }
  return ajv;
}

/**
 * The compiler of request schemas: the API's for every route, the batch's for each operation's params (so an operation
 * is refused with the messages and pointers of the single call it stands for).
 */
export function createValidatorCompiler(): FastifySchemaCompiler<FastifySchema> {
  const bodyAjv = makeAjv(false);
  const paramAjv = makeAjv(true);
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : paramAjv;
    const validate: ValidateFunction = ajv.compile(schema as object);
    // An object body whose every property is optional may also be left out entirely (POST …/issue with no body).
    // Fastify hands an absent body to the validator as null. A body that must be one of several shapes may not.
    const { type, required } = schema as { type?: unknown; required?: unknown[] };
    if (httpPart !== 'body' || type !== 'object' || (required && required.length > 0)) return validate;
    // No body is read as `{}` (docs/api-conventions.md), also where `{}` itself is refused (the test clock's advance
    // needs one of its fields): both then get the same answer.
    const optional = (data: unknown) => (data === undefined || data === null ? validate({}) : validate(data));
    // Fastify reads the errors off the function it was given.
    Object.defineProperty(optional, 'errors', { get: () => validate.errors });
    return optional;
  };
}

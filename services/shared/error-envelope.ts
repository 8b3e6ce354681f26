import type { ErrorObject } from 'ajv';
import { DomainError, type ErrorDetail } from './errors.ts';

/**
 * How a failure is told to the client: the error envelope, and the 400 validation_failed of a schema's errors. The
 * API's error handler renders them, the idempotency rules store them, the batch reports them per operation.
 */

export interface ErrorEnvelope {
  error: { code: string; message: string; details?: ErrorDetail[]; requestId: string };
}

/** The error envelope of a DomainError, its `requestId` the request's (or the batch's) Request-Id. */
export function errorBody(req: { id: string }, err: DomainError): ErrorEnvelope {
  const error: ErrorEnvelope['error'] = { code: err.code, message: err.message, requestId: req.id };
  if (err.details) error.details = err.details;
  return { error };
}

/** A property name as a JSON Pointer reference token: `~` and `/` escaped. */
export const pointerToken = (name: string): string => name.replace(/~/g, '~0').replace(/\//g, '~1');

/** Turns AJV's errors into `[{path, message}]` with JSON Pointers to the offending value, one per place. */
export function validationDetails(errors: ErrorObject[], part: string): ErrorDetail[] {
  const byPath = new Map<string, ErrorDetail>();
  // A nullable field (or any union) that got a wrong value fails every branch: "must be null" and "must match a schema
  // in anyOf" are the less useful part when a concrete error names the place, or a place inside it
  // (`/address/street` too long says more than `/address` must be null).
  const isNullBranch = (e: ErrorObject) => e.keyword === 'type' && (e.params as { type?: string }).type === 'null';
  const isUnionNoise = (e: ErrorObject) => isNullBranch(e) || e.keyword === 'anyOf';
  const concretePlaces = errors.filter((e) => !isUnionNoise(e)).map((e) => e.instancePath);
  const explainedAtOrBelow = (path: string) => concretePlaces.some((p) => p === path || p.startsWith(`${path}/`));
  // A union of literals (TypeBox's enums) fails once per literal: the place gets one message naming them all.
  const allowed = new Map<string, unknown[]>();
  for (const e of errors) {
    if (e.keyword !== 'const') continue;
    allowed.set(e.instancePath, [...(allowed.get(e.instancePath) ?? []), (e.params as { allowedValue: unknown }).allowedValue]);
  }
  for (const e of errors) {
    if (isUnionNoise(e) && explainedAtOrBelow(e.instancePath)) continue;
    let path = e.instancePath;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      path += `/${pointerToken((e.params as { missingProperty: string }).missingProperty)}`;
      message = 'is required';
    }
    if (e.keyword === 'additionalProperties') {
      path += `/${pointerToken((e.params as { additionalProperty: string }).additionalProperty)}`;
      message = 'is not an allowed property';
    }
    // A key that breaks its rules (metadata keys 1..40 characters) is pointed at by its own path.
    const key = e.keyword === 'propertyNames' ? (e.params as { propertyName?: string }).propertyName : (e as { propertyName?: string }).propertyName;
    if (key !== undefined) {
      path += `/${pointerToken(key)}`;
      message = e.keyword === 'propertyNames' ? 'is not an allowed key' : `key ${message}`;
    }
    if (e.keyword === 'format') message = `must be a valid ${(e.params as { format: string }).format}`;
    if (e.keyword === 'const') {
      const values = [...new Set(allowed.get(e.instancePath))].map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
      // A nullable set (`language`: da, en or null) says that null is taken too.
      const orNull = errors.some((o) => o.instancePath === e.instancePath && isNullBranch(o));
      const listed = orNull ? [...values, 'null'] : values;
      message = listed.length === 1 ? `must be ${listed[0]}` : `must be one of: ${listed.join(', ')}`;
    }
    const pointer = path === '' ? '' : path;
    // Unions report one error per branch; the first concrete one per place reads best.
    if (!byPath.has(pointer) || byPath.get(pointer)!.message.startsWith('must match')) {
      byPath.set(pointer, { path: pointer, message: part === 'body' ? message : `${part} ${message}` });
    }
  }
  return [...byPath.values()];
}

/** The 400 validation_failed of a schema's errors: what every route answers for an invalid body or query. */
export function validationFailure(errors: ErrorObject[], part: string): DomainError {
  const details = validationDetails(errors, part);
  const first = details[0];
  const message = first ? `${first.path || part} ${first.message.replace(`${part} `, '')}.` : 'The request is invalid.';
  return new DomainError('validation_failed', message, { details });
}

import assert from 'node:assert/strict';
import { createValidatorCompiler } from '../../services/shared/schema-validator.ts';
import { validationDetails } from '../../services/shared/error-envelope.ts';
import type { ErrorObject } from 'ajv';
import type { FastifySchema } from 'fastify';

describe('request validation', () => {
  const compile = createValidatorCompiler();
  const schema = {
    type: 'object',
    additionalProperties: false,
    required: ['day'],
    properties: { day: { type: 'string', format: 'date' }, n: { type: 'integer', maximum: 5 }, at: { type: 'string', format: 'date-time' } },
  };
  const body = compile({ schema: schema as FastifySchema, method: 'POST', url: '/x', httpPart: 'body' }) as unknown as ((d: unknown) => boolean) & { errors: ErrorObject[] };
  const query = compile({ schema: schema as FastifySchema, method: 'GET', url: '/x', httpPart: 'querystring' }) as unknown as (d: unknown) => boolean;

  it('accepts only real calendar dates', () => {
    for (const ok of ['2024-02-29', '2026-12-31', '2026-01-01']) assert.equal(body({ day: ok }), true, ok);
    for (const bad of ['2026-02-29', '2026-02-30', '2026-13-01', '2026-04-31', '26-01-01', '2026-1-1', '2026-01-01T00:00:00Z']) {
      assert.equal(body({ day: bad }), false, bad);
    }
  });

  it('needs an offset on date-times', () => {
    assert.equal(body({ day: '2026-01-01', at: '2026-01-01T10:00:00Z' }), true);
    assert.equal(body({ day: '2026-01-01', at: '2026-01-01T10:00:00+01:00' }), true);
    assert.equal(body({ day: '2026-01-01', at: '2026-01-01T10:00:00' }), false);
  });

  it('never coerces body types, but does coerce query strings', () => {
    assert.equal(body({ day: '2026-01-01', n: '3' }), false);
    assert.equal(query({ day: '2026-01-01', n: '3' }), true);
  });

  it('keeps unknown properties as an error instead of dropping them', () => {
    const data = { day: '2026-01-01', extra: 1 };
    assert.equal(body(data), false);
    assert.deepEqual(data, { day: '2026-01-01', extra: 1 });
    assert.deepEqual(validationDetails(body.errors, 'body'), [{ path: '/extra', message: 'is not an allowed property' }]);
  });

  it('reports one detail per place, pointing at the value', () => {
    body({ n: 9 });
    assert.deepEqual(validationDetails(body.errors, 'body'), [
      { path: '/day', message: 'is required' },
      { path: '/n', message: 'must be <= 5' },
    ]);
  });
});

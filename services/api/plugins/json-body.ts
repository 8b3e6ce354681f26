import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { DomainError } from '../../../services/shared/errors.ts';
import { pointerToken } from '../../../services/shared/error-envelope.ts';

/**
 * Request bodies are JSON only, and the parser refuses what JSON.parse would accept but the API must not store or
 * walk: bytes that are not UTF-8, prototype properties, nesting deeper than any body of the API, unpaired surrogate
 * escapes and a literal null. An empty body is "no body" (POST …/issue without one is fine); a route whose body
 * fields are all optional then sees `{}`. Registered on the root instance before any route, so every route has it.
 */
export function registerJsonBody(app: FastifyInstance): void {
  // JSON only: any other content type is 415; anything unparsable is invalid_json.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    // JSON text is UTF-8 (RFC 8259): bytes that are not would otherwise be decoded into U+FFFD and stored as such,
    // silently changing what the client sent.
    if (!isUtf8(body as Buffer)) return done(new DomainError('invalid_json', 'The request body is not valid JSON: it is not UTF-8 text.'), undefined);
    const text = (body as Buffer).toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
    } catch (err) {
      // Valid JSON with a `__proto__` (or `constructor.prototype`) property is refused as content, not as syntax.
      const forbidden = err instanceof SyntaxError && err.message === FORBIDDEN_PROTOTYPE ? forbiddenPropertyPath(text) : undefined;
      if (forbidden !== undefined) {
        return done(new DomainError('validation_failed', 'Property names "__proto__" and "constructor.prototype" are not accepted.', {
          details: [{ path: forbidden, message: 'is not an accepted property name' }],
        }), undefined);
      }
      return done(new DomainError('invalid_json', 'The request body is not valid JSON.'), undefined);
    }
    // No body of this API nests deeper than a few levels; a deeper one is refused before anything walks it.
    if (nestedDeeperThan(parsed, MAX_BODY_DEPTH)) {
      return done(new DomainError('validation_failed', `The request body nests deeper than ${MAX_BODY_DEPTH} levels.`, {
        details: [{ path: '', message: `must not nest deeper than ${MAX_BODY_DEPTH} levels` }],
      }), undefined);
    }
    // A \uD800-style escape without its pair is valid JSON but no text: PostgreSQL would store U+FFFD in its place.
    const loneSurrogate = LONE_SURROGATE_ESCAPE.test(text) ? illFormedStringPath(parsed) : undefined;
    if (loneSurrogate !== undefined) {
      return done(new DomainError('validation_failed', 'The request body holds a string with an unpaired surrogate escape (\\uD800-\\uDFFF).', {
        details: [{ path: loneSurrogate, message: 'must be well-formed Unicode text' }],
      }), undefined);
    }
    // A literal null is valid JSON but no request body of this API: refused like any other non-object (400).
    if (parsed === null) {
      return done(new DomainError('validation_failed', 'The request body must be a JSON object.', { details: [{ path: '', message: 'must be object' }] }), undefined);
    }
    done(null, parsed);
  });
  // A route whose body fields are all optional may be called without a body (POST …/issue, an empty PATCH): its
  // handler then sees an empty object, never a missing one.
  app.addHook('preHandler', (req, _reply, done) => {
    if (req.body == null && req.routeOptions.schema?.body) req.body = {};
    done();
  });
}

const MAX_BODY_DEPTH = 32;

/** secure-json-parse's message for a body it refuses because of a prototype property. */
const FORBIDDEN_PROTOTYPE = 'Object contains forbidden prototype property';

/**
 * Where a JSON text holds a `__proto__` property, or a `constructor` object with a `prototype` property, as a JSON
 * Pointer. JSON.parse keeps `__proto__` as an ordinary own property, so the walk sees it without any risk.
 */
function forbiddenPropertyPath(text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
      const at = `${path}/${pointerToken(k)}`;
      if (k === '__proto__') return at;
      if (k === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype')) return `${at}/prototype`;
      stack.push([child, at]);
    }
  }
  return undefined;
}

/** Any escape of a surrogate code unit; whether it is paired is decided on the parsed strings. */
const LONE_SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** The JSON Pointer of a property name or string value that is not well-formed UTF-16 (one such place), if any. */
function illFormedStringPath(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (!v.isWellFormed()) return path;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      v.forEach((child, i) => stack.push([child, `${path}/${i}`]));
      continue;
    }
    for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
      const at = `${path}/${pointerToken(k)}`;
      if (!k.isWellFormed()) return at;
      stack.push([child, at]);
    }
  }
  return undefined;
}

/** Whether a parsed JSON value nests objects or arrays deeper than `max`; iterative, so no depth can overflow it. */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v as Record<string, unknown>)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

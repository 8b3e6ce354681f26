import formBody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';

/** A provider's callbacks: the largest body the service reads at all (also the app's bodyLimit). */
export const CALLBACK_BODY_LIMIT = 64 * 1024;
/** The pages' forms carry a code, an e-mail address, a few tokens: a few fields, never more than this. */
const FORM_BODY_LIMIT = 4 * 1024;

/**
 * The fields of a form, each taken once: a field sent twice keeps its first value (a string, never a list), so every
 * handler reads strings whatever a client sends.
 */
export function formFields(body: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(body)) if (!(k in fields)) fields[k] = v;
  return fields;
}

/**
 * The only bodies the pay service reads: urlencoded forms (small) for the pages, through @fastify/formbody, and
 * JSON for the provider's callbacks, kept as its exact bytes, which the callback's signature covers. Any other type
 * is 415.
 */
export async function registerBodyParsers(app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers();
  await app.register(formBody, { bodyLimit: FORM_BODY_LIMIT, parser: formFields });
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: CALLBACK_BODY_LIMIT }, (_req, body, done) => done(null, body));
}

import { buildApp, type AppDeps } from './app.ts';

/**
 * A dependency the document never uses: building the app only registers routes, so nothing may touch it. Any use
 * is a mistake and says which dependency it was.
 */
const unused = <T extends object>(name: string): T =>
  new Proxy({} as T, {
    get(_target, prop) {
      if (prop === 'then') return undefined; // not a promise
      throw new Error(`the OpenAPI document is built without ${name} (tried to use ${name}.${String(prop)})`);
    },
  });

/**
 * The OpenAPI document exactly as GET /v1/openapi.json serves it, built from the routes without a database, key,
 * renderer or workflow engine: what `npm run openapi` writes to clients/typescript/openapi.json. Without
 * `publicApiUrl` its server is `/`, the origin the document is fetched from.
 */
export async function openApiDocument(opts: { publicApiUrl?: string } = {}): Promise<Record<string, unknown>> {
  const deps: AppDeps = {
    db: unused('a database'),
    keyring: unused('a keyring'),
    pdf: unused('a PDF renderer'),
    documents: unused('a document store'),
    clock: unused('a business clock'),
    mailDispatch: unused('a mail dispatch'),
    mailDomain: 'faktura.invalid',
    config: { rateLimitDefault: 0, rateLimitDocument: 0, authCacheTtlMs: 0, logLevel: 'silent' },
    publicApiUrl: opts.publicApiUrl,
  };
  const app = await buildApp(deps);
  try {
    // A copy: the app's own is cached and served.
    return structuredClone(app.swagger()) as unknown as Record<string, unknown>;
  } finally {
    await app.close();
  }
}

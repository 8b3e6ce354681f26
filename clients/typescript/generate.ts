/**
 * `npm run openapi` (also the first step of `npm run build`): writes the OpenAPI document the API serves to
 * `openapi.json` beside this file, and the TypeScript types `openapi-typescript` generates from it to `schema.ts`,
 * which the typed client (`index.ts`, on `openapi-fetch`) uses. No database or other service is needed. Both files
 * are committed; test/http/openapi.test.ts fails when they differ from what this would write now.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import { openApiDocument } from '../../services/api/openapi-document.ts';

export const CLIENT_DIR = dirname(fileURLToPath(import.meta.url));

/** The generated files by name (relative to CLIENT_DIR) and their content. */
export async function generateClientFiles(): Promise<Record<'openapi.json' | 'schema.ts', string>> {
  const doc = await openApiDocument();
  const ast = await openapiTS(structuredClone(doc) as unknown as OpenAPI3, { silent: true });
  return {
    'openapi.json': `${JSON.stringify(doc, null, 2)}\n`,
    'schema.ts': `${COMMENT_HEADER}${astToString(ast)}`,
  };
}

if (import.meta.main) {
  const files = await generateClientFiles();
  for (const [name, content] of Object.entries(files)) writeFileSync(join(CLIENT_DIR, name), content);
  process.stdout.write(`wrote ${Object.keys(files).map((n) => join('clients/typescript', n)).join(', ')}\n`);
}

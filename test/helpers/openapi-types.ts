// The served OpenAPI document's types (openapi-typescript); `npm run openapi:types` rewrites them.
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import openapiTS, { type OpenAPI3 } from 'openapi-typescript';
import { createTestApp } from './app.ts';
import { closeTestDatabases } from './database.ts';

/**
 * The committed types the typed-client test compiles against (test/http/openapi-client.test.ts
 * fails when the served document would make other ones).
 *
 * openapi-typescript 6: its 7.x builds the types with TypeScript's JavaScript API of 5.x, which
 * TypeScript 7's package (this project's compiler) no longer has; 6.x writes them as text.
 */
export const GENERATED_TYPES = fileURLToPath(new URL('../generated/openapi.d.ts', import.meta.url));

export function typesOf(document: unknown): Promise<string> {
  return openapiTS(document as OpenAPI3);
}

if (import.meta.main) {
  const testApp = await createTestApp();
  const document = (await testApp.app.inject({ url: '/docs/json' })).json();
  await writeFile(GENERATED_TYPES, await typesOf(document));
  await testApp.close();
  await closeTestDatabases();
  console.log(`wrote ${GENERATED_TYPES}`);
}

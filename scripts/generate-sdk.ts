/*
 * Regenerates the TypeScript SDK's generated half from the code, without a server:
 *
 *   npm run sdk:generate           writes sdk/typescript/openapi.json (the public OpenAPI document) and
 *                                  sdk/typescript/src/generated/api.ts (its types, by the SDK's pinned openapi-typescript)
 *   npm run sdk:generate -- --check  writes nothing; exits 1 naming the files that are not current
 *
 * Run it after changing a controller, a DTO or the document's assembly; sdk/typescript/test/sdk.e2e-spec.ts runs the
 * check, and fails until the committed files are what this writes.
 */
import 'reflect-metadata';
import { join } from 'node:path';
import { createApiDocumentsWithoutServer } from '../apps/api/src/api-document';
import { formatted, openApiTypes, runGenerator } from './generated-files';

const SDK_DIRECTORY = join(__dirname, '..', 'sdk', 'typescript');
const DOCUMENT = join(SDK_DIRECTORY, 'openapi.json');
const TYPES = join(SDK_DIRECTORY, 'src', 'generated', 'api.ts');
const BANNER = '// Generated from openapi.json by `npm run sdk:generate` (openapi-typescript); do not edit.';

runGenerator(
  async () => {
    const document = await formatted(DOCUMENT, JSON.stringify((await createApiDocumentsWithoutServer()).public));
    return new Map([
      [DOCUMENT, document],
      [TYPES, await openApiTypes(TYPES, document, BANNER)],
    ]);
  },
  { current: 'The SDK is current with the OpenAPI document.', command: 'npm run sdk:generate' },
);

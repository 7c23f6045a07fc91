/*
 * Regenerates the example LiveKit agent's types of the runtime API from the code, without a server, as
 * `npm run sdk:generate` does the SDK's from the public document:
 *
 *   npm run agent:generate            writes examples/livekit-agent/src/generated/runtime-api.ts, the types of the
 *                                     internal OpenAPI document (`/api/internal/docs-json`)
 *   npm run agent:generate -- --check  writes nothing; exits 1 when that file is not current
 *
 * Run it after changing a runtime route or its DTOs; examples/livekit-agent/test/runtime-api.e2e-spec.ts runs the check.
 */
import 'reflect-metadata';
import { join } from 'node:path';
import { createApiDocumentsWithoutServer } from '../apps/api/src/api-document';
import { openApiTypes, runGenerator } from './generated-files';

const TYPES = join(__dirname, '..', 'examples', 'livekit-agent', 'src', 'generated', 'runtime-api.ts');
const BANNER =
  '// Generated from the runtime API’s OpenAPI document (/api/internal/docs-json) by `npm run agent:generate`\n' +
  '// (openapi-typescript); do not edit.';

runGenerator(
  async () => {
    const document = JSON.stringify((await createApiDocumentsWithoutServer()).internal);
    return new Map([[TYPES, await openApiTypes(TYPES, document, BANNER)]]);
  },
  {
    current: 'The agent’s runtime API types are current with the OpenAPI document.',
    command: 'npm run agent:generate',
  },
);

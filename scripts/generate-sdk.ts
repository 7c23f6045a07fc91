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
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { createApiDocumentsWithoutServer } from '../apps/api/src/api-document';

const SDK_DIRECTORY = join(__dirname, '..', 'sdk', 'typescript');
const DOCUMENT = join(SDK_DIRECTORY, 'openapi.json');
const TYPES = join(SDK_DIRECTORY, 'src', 'generated', 'api.ts');

/** The generated files as they should be, formatted as the repository formats its sources: path to content. */
async function generatedSdkFiles(): Promise<Map<string, string>> {
  const document = (await createApiDocumentsWithoutServer()).public;
  const documentText = await formatted(DOCUMENT, JSON.stringify(document));
  // The generator reads the document from a file, as it reads the committed one.
  const directory = mkdtempSync(join(tmpdir(), 'sdk-document-'));
  let types: string;
  try {
    writeFileSync(join(directory, 'openapi.json'), documentText);
    types = execFileSync(
      process.execPath,
      [join(SDK_DIRECTORY, 'scripts', 'generate-types.mjs'), join(directory, 'openapi.json')],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  return new Map([
    [DOCUMENT, documentText],
    [TYPES, await formatted(TYPES, types)],
  ]);
}

async function formatted(path: string, text: string): Promise<string> {
  return format(text, { ...(await resolveConfig(path)), filepath: path });
}

/** The files whose committed content differs from what generation gives, relative to the repository. */
async function staleSdkFiles(): Promise<string[]> {
  const stale: string[] = [];
  for (const [path, content] of await generatedSdkFiles()) {
    let committed: string | undefined;
    try {
      committed = readFileSync(path, 'utf8');
    } catch {
      committed = undefined;
    }
    if (committed !== content) stale.push(relative(join(__dirname, '..'), path));
  }
  return stale;
}

async function main(): Promise<void> {
  if (process.argv.includes('--check')) {
    const stale = await staleSdkFiles();
    if (stale.length > 0) {
      console.error(`Not current with the code: ${stale.join(', ')}. Run npm run sdk:generate.`);
      process.exit(1);
    }
    console.log('The SDK is current with the OpenAPI document.');
    return;
  }
  for (const [path, content] of await generatedSdkFiles()) {
    writeFileSync(path, content);
    console.log(`wrote ${relative(join(__dirname, '..'), path)}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

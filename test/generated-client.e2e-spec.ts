import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { type Stack, startStack } from './support/stack';

const run = promisify(execFile);
const DIRECTORY = join(__dirname, 'generated-client');

/**
 * The document is right when a client generated from it works: types are generated from the served document
 * (openapi-typescript), the README's first session written against them is type-checked strictly, then run through
 * openapi-fetch against the real API and worker.
 */
describe('A TypeScript client generated from the OpenAPI document', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
    await new Promise<void>((resolve) => stack.api.getHttpServer().listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await stack.close();
    for (const generated of ['api.d.ts', 'openapi.json']) await rm(join(DIRECTORY, generated), { force: true });
  });

  it('type-checks the first session, and runs it', async () => {
    const document = (await stack.http.get('/api/docs-json').expect(200)).body;
    // Through its command line, as a client's build would run it (its module is ESM-only inside).
    await writeFile(join(DIRECTORY, 'openapi.json'), JSON.stringify(document));
    await run(process.execPath, [
      join(__dirname, '..', 'node_modules', 'openapi-typescript', 'bin', 'cli.js'),
      join(DIRECTORY, 'openapi.json'),
      '--output',
      join(DIRECTORY, 'api.d.ts'),
    ]);

    const program = ts.createProgram([join(DIRECTORY, 'session.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      esModuleInterop: true,
      skipLibCheck: true,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: ['node'],
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    expect(problems).toEqual([]);

    const { port } = stack.api.getHttpServer().address() as AddressInfo;
    const { stdout } = await run(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', join(DIRECTORY, 'session.ts')],
      { env: { ...process.env, BASE_URL: `http://127.0.0.1:${port}` }, timeout: 60_000 },
    );
    expect(JSON.parse(stdout)).toEqual({
      status: 'active',
      passages: ['We are open Monday to Friday, nine to five.'],
    });
  }, 120_000);
});

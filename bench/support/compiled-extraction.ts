import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { join, resolve, sep } from 'node:path';
import * as ts from 'typescript';
import { CACHE_DIR } from './pdf-fixtures';

type ExtractionLib = typeof import('@app/extraction');

const SOURCE_DIR = join(__dirname, '..', '..', 'libs', 'extraction', 'src');

/**
 * The extraction library as production runs it: plain JavaScript, so the extraction thread starts from
 * `extraction.thread.js` instead of transpiling TypeScript sources through ts-node. The current sources are
 * transpiled (no type check) into bench/.cache/ on every call, so the figures follow the code.
 */
export function loadCompiledExtraction(): ExtractionLib {
  const outDir = join(CACHE_DIR, 'extraction-js');
  mkdirSync(outDir, { recursive: true });
  const compilerOptions: ts.CompilerOptions = {
    module: ts.ModuleKind.CommonJS,
    target: ts.ScriptTarget.ES2022,
    esModuleInterop: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
  };
  for (const file of readdirSync(SOURCE_DIR)) {
    if (!file.endsWith('.ts') || file.endsWith('.spec.ts')) continue;
    const source = readFileSync(join(SOURCE_DIR, file), 'utf8');
    const { outputText } = ts.transpileModule(source, { compilerOptions, fileName: file });
    writeFileSync(join(outDir, file.replace(/\.ts$/, '.js')), outputText);
  }

  return require(join(outDir, 'index.js')) as ExtractionLib;
}

/**
 * Makes every later `require` of a file in libs/extraction/src load its transpiled copy instead, so an app
 * booted from TypeScript sources starts its extraction threads from compiled JavaScript, as a deployed
 * worker does. Must run before the apps are imported.
 */
export function redirectExtractionToCompiled(): void {
  loadCompiledExtraction();
  const outDir = join(CACHE_DIR, 'extraction-js');
  const moduleApi = Module as unknown as {
    _resolveFilename: (request: string, parent: unknown, ...rest: unknown[]) => string;
  };
  const resolve = moduleApi._resolveFilename;
  moduleApi._resolveFilename = function (request, parent, ...rest) {
    const resolved = resolve.call(this, request, parent, ...rest);
    if (resolved.startsWith(SOURCE_DIR + sep) && resolved.endsWith('.ts')) {
      return join(outDir, resolved.slice(SOURCE_DIR.length + 1).replace(/\.ts$/, '.js'));
    }
    return resolved;
  };
}

/** Builds named on a benchmark's command line as `label=root` (a checkout root holding `dist/`), or a bare root. */
export function buildRootsFromArguments(): { label: string; root: string }[] {
  return process.argv.slice(2).map((argument) => {
    const [label, root] = argument.includes('=') ? argument.split('=', 2) : [argument, argument];
    return { label, root: resolve(root) };
  });
}

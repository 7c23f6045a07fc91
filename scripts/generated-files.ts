/*
 * What `npm run sdk:generate` and `npm run agent:generate` share: types generated from one of the API's OpenAPI
 * documents (made from the code, without a server) by the SDK's pinned openapi-typescript, formatted as the repository
 * formats its sources, and written, or with `--check` compared with what is committed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { format, resolveConfig } from 'prettier';

const ROOT = join(__dirname, '..');
const GENERATE_TYPES = join(ROOT, 'sdk', 'typescript', 'scripts', 'generate-types.mjs');

export async function formatted(path: string, text: string): Promise<string> {
  return format(text, { ...(await resolveConfig(path)), filepath: path });
}

/** The TypeScript types of a document's paths, operations and schemas, the module opening with `banner`. */
export async function openApiTypes(path: string, documentText: string, banner: string): Promise<string> {
  // The generator reads the document from a file, as it reads the committed one.
  const directory = mkdtempSync(join(tmpdir(), 'openapi-document-'));
  try {
    writeFileSync(join(directory, 'openapi.json'), documentText);
    const types = execFileSync(process.execPath, [GENERATE_TYPES, join(directory, 'openapi.json'), banner], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    return await formatted(path, types);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/**
 * Writes the files `generate` gives (path to content), or with `--check` writes nothing and exits 1 naming those whose
 * committed content differs, saying `current` when none does; `command` is what makes them current.
 */
export function runGenerator(
  generate: () => Promise<Map<string, string>>,
  { current, command }: { current: string; command: string },
): void {
  const main = async () => {
    const files = await generate();
    if (process.argv.includes('--check')) {
      const stale = [...files].filter(([path, content]) => committed(path) !== content).map(([path]) => shown(path));
      if (stale.length > 0) {
        console.error(`Not current with the code: ${stale.join(', ')}. Run ${command}.`);
        process.exit(1);
      }
      console.log(current);
      return;
    }
    for (const [path, content] of files) {
      writeFileSync(path, content);
      console.log(`wrote ${shown(path)}`);
    }
  };
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}

function committed(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function shown(path: string): string {
  return relative(ROOT, path);
}

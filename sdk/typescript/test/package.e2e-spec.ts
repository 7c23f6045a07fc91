import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SDK_DIRECTORY = join(__dirname, '..');

/**
 * A registry on 127.0.0.1 that has never heard of the package: what `npm publish` asks before a first publish,
 * answered without the network, and the requests it made recorded.
 */
async function emptyRegistry() {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    request.resume();
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { url, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('The TypeScript SDK as a package', () => {
  it('is ready to publish: `npm publish --dry-run` is clean, and the tarball holds what its exports name', async () => {
    const manifest = JSON.parse(await readFile(join(SDK_DIRECTORY, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({
      name: '@voice-assistant/sdk',
      version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      license: 'MIT',
      type: 'module',
      main: './dist/index.js',
      types: './dist/index.d.ts',
      exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
      publishConfig: { access: 'public' },
    });
    expect(manifest.private).toBeUndefined();

    const registry = await emptyRegistry();
    try {
      const host = registry.url.replace(/^http:/, '');
      const { stdout, stderr } = await run(
        process.execPath,
        [
          process.env.npm_execpath ??
            join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'),
          'publish',
          '--dry-run',
          '--json',
          `--registry=${registry.url}`,
          `--${host}:_authToken=dry-run`,
        ],
        { cwd: SDK_DIRECTORY, timeout: 120_000 },
      );
      // Clean: npm corrected nothing and warned of nothing.
      expect(stderr.split('\n').filter((line) => /^npm (warn|error)/i.test(line))).toEqual([]);
      const report = JSON.parse(stdout.slice(stdout.indexOf('{')));
      const tarball = report[manifest.name] ?? report;
      expect({ name: tarball.name, version: tarball.version }).toEqual({
        name: manifest.name,
        version: manifest.version,
      });
      const files: string[] = tarball.files.map((file: { path: string }) => file.path);
      // The exports and the types resolve inside the tarball; no test, source or source map goes out.
      for (const path of [manifest.main, manifest.types, ...Object.values(manifest.exports['.'])] as string[]) {
        expect(files).toContain(path.replace(/^\.\//, ''));
      }
      expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'openapi.json']));
      expect(files.filter((path) => /^(src|test|scripts)\/|\.map$|\.tgz$/.test(path))).toEqual([]);
      expect(registry.requests.every((request) => request.startsWith('GET '))).toBe(true);
    } finally {
      await registry.close();
    }
  }, 180_000);
});

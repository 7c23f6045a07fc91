import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { readmeFirstSession } from './support/readme';
import { type Stack, startStack } from './support/stack';

const run = promisify(execFile);

describe('The README’s first session', () => {
  let stack: Stack;
  let directory: string;

  beforeAll(async () => {
    stack = await startStack();
    await new Promise<void>((resolve) => stack.api.getHttpServer().listen(0, '127.0.0.1', resolve));
    directory = await mkdtemp(join(tmpdir(), 'readme-'));
  });
  afterAll(async () => {
    await stack.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('works pasted twice into one shell, each time with its own account and ids', async () => {
    const { port } = stack.api.getHttpServer().address() as AddressInfo;
    // As written: only PORT tells it where the API is.
    const script = await readmeFirstSession();
    // One shell, the block pasted twice: what the first paste left in variables must not break the second.
    const { stdout, stderr } = await run('bash', ['-c', `${script}\n${script}`], {
      cwd: directory,
      env: { PATH: `${dirname(process.execPath)}:${process.env.PATH}`, HOME: directory, PORT: String(port) },
      timeout: 120_000,
    });
    const documents = [...stdout.matchAll(/^document (\d+): (\w+)$/gm)].map((match) => [Number(match[1]), match[2]]);
    expect({ documents, stderr }).toEqual({
      documents: [
        [expect.any(Number), 'active'],
        [expect.any(Number), 'active'],
      ],
      stderr: '',
    });
    expect(documents[0][0]).not.toBe(documents[1][0]);
    const searches = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line));
    expect(searches).toHaveLength(2);
    for (const search of searches)
      expect(JSON.stringify(search)).toContain('We are open Monday to Friday, nine to five.');
  }, 150_000);
});

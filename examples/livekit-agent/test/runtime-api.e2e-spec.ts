import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..', '..');

describe('The agent’s types of the runtime API', () => {
  it('are generated from the runtime’s OpenAPI document, and current with the code', async () => {
    // What `npm run agent:generate -- --check` says, run as a developer runs it.
    const check = await run(
      process.execPath,
      [
        '-r',
        'ts-node/register/transpile-only',
        '-r',
        'tsconfig-paths/register',
        'scripts/generate-agent.ts',
        '--check',
      ],
      { cwd: ROOT, timeout: 180_000 },
    ).catch((error: { stdout: string; stderr: string }) => error);
    expect({ stdout: check.stdout, stderr: check.stderr }).toEqual({
      stdout: 'The agent’s runtime API types are current with the OpenAPI document.\n',
      stderr: '',
    });
  }, 240_000);
});

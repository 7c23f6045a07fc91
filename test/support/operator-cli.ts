import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Stack } from './stack';

/**
 * Runs an operator command (`apps/api/src/cli.ts`, as `npm run cli -- ...` runs it from the build) against the
 * stack's database; `env` adds to its environment (LiveKit's settings, say). Its exit code and what it printed.
 */
export async function operatorCommand(
  stack: Stack,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; output: string }> {
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'apps/api/src/cli.ts', ...args],
    {
      env: {
        ...process.env,
        DATABASE_URL: stack.config.databaseUrl,
        ENCRYPTION_KEY: stack.config.encryptionKey.toString('base64'),
        LOG_LEVEL: 'silent',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const [code] = await once(child, 'exit');
  return { code, output };
}

/**
 * Gives the account a number bought from a carrier, as operations staff do (`phone-numbers:assign`), with further
 * options (`--outbound-trunk`) and environment (LiveKit's settings).
 */
export const assignNumber = (
  stack: Stack,
  email: string,
  number: string,
  options: string[] = [],
  env: Record<string, string> = {},
) =>
  operatorCommand(
    stack,
    [
      'phone-numbers:assign',
      '--user',
      email,
      '--number',
      number,
      '--country',
      'US',
      '--region',
      'CA',
      '--sms',
      ...options,
    ],
    env,
  );

import { spawn } from 'node:child_process';
import path from 'node:path';

const AGENT = path.join(__dirname, '..');

/** Runs the worker from its sources (as `npm run start:src` does) with only `env`; resolves with what it printed. */
function boot(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'start'], {
      cwd: AGENT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the worker with a bad environment', () => {
  it('exits 1 with one line naming every missing or invalid variable, and no stack trace', async () => {
    const { code, stdout, stderr } = await boot({
      LIVEKIT_URL: 'ws://127.0.0.1:7880',
      LIVEKIT_API_KEY: 'devkey',
      LIVEKIT_API_SECRET: 'secret',
      VOICE_SERVICE_URL: 'localhost:3000',
      LLM_PROVIDER: 'anthropic',
    });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      'Invalid configuration: VOICE_SERVICE_URL must be an http(s) URL; RUNTIME_API_TOKEN is required; ' +
        'LLM_PROVIDER must be one of openai, livekit; DEEPGRAM_API_KEY is required; OPENAI_API_KEY is required\n',
    );
  }, 60_000);
});

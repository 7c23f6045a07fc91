import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { onInterrupt } from './report';

export const ROOT = join(__dirname, '..', '..');
/** The built apps (`npm run build`), as deployed. */
export const API_ENTRY = join(ROOT, 'dist', 'apps', 'api', 'src', 'main.js');
export const WORKER_ENTRY = join(ROOT, 'dist', 'apps', 'worker', 'src', 'main.js');

export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  return port;
}

/** Waits until `url` answers at all (any status), failing early when the server has exited. */
export async function waitForHttp(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: the server exited with code ${child.exitCode}`);
    const answered = await fetch(url).then(
      async (response) => (await response.arrayBuffer(), true),
      () => false,
    );
    if (answered) return;
    await sleep(100);
  }
  throw new Error(`${url} did not answer within 60 s`);
}

export interface ServerProcess {
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts a Node process from the project root with `env` added to this one's; `stop` sends `stopSignal`
 * (SIGTERM unless told otherwise, e.g. SIGUSR2 for a profiled process that must exit to write its profile) and
 * kills it after 30 s. An interrupt of the benchmark stops it too.
 */
export function startServer(
  args: string[],
  env: Record<string, string>,
  stopSignal: NodeJS.Signals = 'SIGTERM',
): ServerProcess {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const stop = async () => {
    forget();
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(stopSignal);
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await once(child, 'exit');
    clearTimeout(killer);
  };
  const forget = onInterrupt(stop);
  return { child, stop };
}

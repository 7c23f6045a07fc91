import type { INestApplication } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import pino from 'pino';
import { type AppConfig, ConfigurationError, loadConfig } from '@app/config';
import { exitAfterGracePeriod } from './shutdown';

/**
 * Entry point of a process: reads the configuration (a bad value stops here with a message naming it), caps the
 * shutdown wait, builds the app and listens. Any boot failure exits non-zero.
 */
export function runProcess(
  create: (config: AppConfig) => Promise<INestApplication>,
  portOf: (config: AppConfig) => number,
): void {
  const boot = async () => {
    const config = loadConfig();
    exitAfterGracePeriod(config.shutdownGraceSeconds);
    stopWithSupervisor();
    const app = await create(config);
    await app.listen(portOf(config), '0.0.0.0');
    new Logger('Bootstrap').log(`Listening on http://localhost:${portOf(config)}/api`);
  };
  boot().catch((error: unknown) => {
    // One JSON line, like every other line the process writes, so log collectors keep it whole.
    const message =
      error instanceof ConfigurationError
        ? error.message
        : error instanceof Error
          ? (error.stack ?? error.message)
          : String(error);
    // The same pino line as every other (numeric level, epoch time, pid, hostname), written before exiting.
    pino(pino.destination({ dest: 1, sync: true })).fatal({ context: 'Bootstrap' }, message);
    process.exit(1);
  });
}

/**
 * Started by `npm start` (scripts/start.js), the process has an IPC channel to it. The channel closes when the
 * supervisor is gone however it went, SIGKILL included: then this process drains and exits as on SIGTERM instead of
 * answering 503 with nobody left to stop it.
 */
function stopWithSupervisor(): void {
  if (!process.send) return;
  // The channel alone must not keep a drained process alive.
  process.channel?.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}

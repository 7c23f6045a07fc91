import 'reflect-metadata';
import { ConfigurationError, loadConfig } from '@app/config';
import { exitAfterGracePeriod } from '@app/platform';
import { createWorkerApp } from './worker.app';

async function bootstrap(): Promise<void> {
  const config = loadConfig();
  exitAfterGracePeriod(config.shutdownGraceSeconds);
  const app = await createWorkerApp(config);
  await app.listen(config.workerPort, '0.0.0.0');
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof ConfigurationError ? error.message : error);
  process.exit(1);
});

import { ConsoleLogger, INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { AppConfig } from '@app/config';
import { WorkerModule } from './worker.module';

/**
 * Builds the worker: BullMQ consumers plus an HTTP server for health checks only. On SIGTERM, Nest closes the
 * BullMQ workers, which wait for the jobs in hand to finish before the process exits.
 */
export async function createWorkerApp(config: AppConfig): Promise<INestApplication> {
  const app = await NestFactory.create(WorkerModule.forRoot(config), {
    bufferLogs: true,
    // Until the JSON logger takes over (and if boot fails before it does), Nest's own lines are JSON too.
    logger: new ConsoleLogger({ json: true, colors: false }),
  });
  app.useLogger(app.get(Logger));
  app.setGlobalPrefix('api');
  app.enableShutdownHooks();
  return app;
}

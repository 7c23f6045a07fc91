import type { INestApplication } from '@nestjs/common';
import { type AppConfig } from '@app/config';
import { createHttpApp } from '@app/platform';
import { WorkerModule } from './worker.module';

/**
 * Builds the worker: BullMQ consumers plus an HTTP server for health checks only. On SIGTERM, Nest closes the
 * BullMQ workers, which wait for the jobs in hand to finish before the process exits.
 */
export async function createWorkerApp(config: AppConfig): Promise<INestApplication> {
  return createHttpApp(WorkerModule.forRoot(config), { timeouts: config.httpTimeouts });
}

import { ConsoleLogger, type DynamicModule, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type NestExpressApplication } from '@nestjs/platform-express';
import type { HttpTimeouts } from '@app/config';
import { AppLogger } from '../logging/app-logger.service';
import { RequestLogging } from '../logging/request-logging.service';
import { ManagedExpressAdapter } from './managed-express.adapter';
import { bodyParser } from './request-body';

export interface HttpAppOptions {
  timeouts: HttpTimeouts;
  /** Express's `trust proxy`: which hops may name the client in `X-Forwarded-For` (see docs/api/rate-limits.md). */
  trustProxy?: boolean | string | number;
}

/**
 * A Nest application on Express with the house's HTTP conventions, shared by the API and the worker: JSON logs
 * with a request line and id, the body parsers and their limits, the server's timeouts, the global prefix `api`
 * and graceful shutdown. Express matches paths in any letter case and with a trailing slash by default, as the
 * API has always answered them.
 */
export async function createHttpApp(
  module: DynamicModule | Type,
  options: HttpAppOptions,
): Promise<NestExpressApplication> {
  const adapter = new ManagedExpressAdapter(options.timeouts);
  const express = adapter.getInstance();
  // Nothing a client gains from: a header naming the framework, and an ETag hashed from every JSON answer that no
  // client of this API revalidates with (lists change on every write; single reads are cheap).
  express.disable('x-powered-by');
  express.set('etag', false);
  express.set('trust proxy', options.trustProxy ?? false);
  const app = await NestFactory.create<NestExpressApplication>(module, adapter, {
    // The parsers are the ones below, with the house's limits; Nest's defaults would be added on top of them.
    bodyParser: false,
    bufferLogs: true,
    // Until the JSON logger takes over (and if boot fails before it does), Nest's own lines are JSON too.
    logger: new ConsoleLogger({ json: true, colors: false }),
  });
  app.useLogger(app.get(AppLogger));
  // First, so the request line and id cover what the body parsers refuse.
  app.use(app.get(RequestLogging).middleware());
  app.use(bodyParser());
  app.setGlobalPrefix('api');
  app.enableShutdownHooks();
  return app;
}

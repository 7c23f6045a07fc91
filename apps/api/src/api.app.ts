import { ConsoleLogger, INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import type { DynamicModule } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { MAX_INPUT_DEPTH } from '@app/contracts';
import {
  answerClientError,
  httpMetricsMiddleware,
  MetricsRegistry,
  refuseDeepJson,
  translateBodyParserErrors,
} from '@app/platform';
import { mountQueueDashboard } from './admin/queue-dashboard';
import { serveApiDocument } from './api-document';
import { ApiModule } from './api.module';

/** Largest JSON or form body accepted; file uploads have their own limit. */
const BODY_LIMIT = '1mb';

/** Builds the API application (used by main.ts and by the e2e tests, so both run the same wiring). */
export async function createApiApp(
  config: AppConfig,
  extraModules: DynamicModule['imports'] = [],
): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(ApiModule.forRoot(config, extraModules), {
    bodyParser: false,
    bufferLogs: true,
    // Until the JSON logger takes over (and if boot fails before it does), Nest's own lines are JSON too.
    logger: new ConsoleLogger({ json: true, colors: false }),
  });
  app.useLogger(app.get(Logger));
  app.set('trust proxy', 'loopback');
  app.disable('x-powered-by');
  app.getHttpServer().on('clientError', answerClientError);
  app.use(httpMetricsMiddleware(app.get(MetricsRegistry)));
  app.useBodyParser('json', { limit: BODY_LIMIT, verify: refuseDeepJson });
  app.useBodyParser('urlencoded', { limit: BODY_LIMIT, extended: true, parameterLimit: 1000, depth: MAX_INPUT_DEPTH });
  app.use(translateBodyParserErrors);
  app.setGlobalPrefix('api');
  mountQueueDashboard(app);
  if (config.corsOrigins.length > 0) {
    app.enableCors({
      origin: config.corsOrigins,
      exposedHeaders: ['X-Request-Id', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'Allow'],
      maxAge: 600,
    });
  }
  app.enableShutdownHooks();

  serveApiDocument(app);
  return app;
}

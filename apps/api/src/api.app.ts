import type { DynamicModule, INestApplication } from '@nestjs/common';
import { type AppConfig } from '@app/config';
import { createHttpApp, httpMetrics, MetricsRegistry } from '@app/platform';
import { mountQueueDashboard } from './admin/queue-dashboard';
import { serveApiDocument } from './api-document';
import { ApiModule } from './api.module';

/** Builds the API application (used by main.ts and by the e2e tests, so both run the same wiring). */
export async function createApiApp(
  config: AppConfig,
  extraModules: DynamicModule['imports'] = [],
): Promise<INestApplication> {
  // TRUST_PROXY says whose X-Forwarded-* headers name the client's address and protocol (see docs/configuration.md).
  const app = await createHttpApp(ApiModule.forRoot(config, extraModules), {
    timeouts: config.httpTimeouts,
    trustProxy: config.trustProxy,
  });
  app.use(httpMetrics(app.get(MetricsRegistry)));
  mountQueueDashboard(app);
  if (config.corsOrigins.length > 0) {
    app.enableCors({
      origin: config.corsOrigins,
      exposedHeaders: ['X-Request-Id', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'Allow'],
      maxAge: 600,
    });
  }
  serveApiDocument(app);
  return app;
}

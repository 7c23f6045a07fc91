import { Controller, type DynamicModule, Get, Header, Module } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { ApiPublicResource } from '../http/api-docs.decorators';
import { Public } from '../http/public.decorator';
import { SkipRateLimit } from '../http/skip-rate-limit.decorator';
import { DatabasePoolMetrics } from './database-pool.metrics';
import { MetricsServer } from './metrics-server';
import { MetricsRegistry } from './metrics.registry';

/** Prometheus text format at `/api/metrics` on a worker's port, unauthenticated like health, for its scraper. */
@ApiPublicResource('Health')
@Public()
@SkipRateLimit()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly registry: MetricsRegistry) {}

  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ operationId: 'metrics', summary: 'Prometheus metrics of this process' })
  @ApiOkResponse({
    description: 'Prometheus metrics (text format)',
    content: { 'text/plain': { schema: { type: 'string' } } },
  })
  index(): Promise<string> {
    return this.registry.metrics();
  }
}

/**
 * This app's metrics registry (see MetricsRegistry), the database pool gauges, and where the metrics are served:
 * `own-port` on METRICS_PORT apart from the app's port (the API, whose port is public; see MetricsServer), or
 * `app-port` as a route of the app (a worker, whose port only probes and the scraper reach).
 */
@Module({})
export class MetricsModule {
  static forRoot(served: 'own-port' | 'app-port'): DynamicModule {
    return {
      module: MetricsModule,
      global: true,
      controllers: served === 'app-port' ? [MetricsController] : [],
      providers: [MetricsRegistry, DatabasePoolMetrics, ...(served === 'own-port' ? [MetricsServer] : [])],
      exports: [MetricsRegistry],
    };
  }
}

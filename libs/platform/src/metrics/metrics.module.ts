import { type DynamicModule, Module } from '@nestjs/common';
import { DatabasePoolMetrics } from './database-pool.metrics';
import { MetricsController } from './metrics.controller';
import { MetricsServer } from './metrics-server';
import { MetricsRegistry } from './metrics.registry';

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

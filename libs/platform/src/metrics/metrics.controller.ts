import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { ApiPublicResource } from '../http/api-docs.decorators';
import { Public } from '../http/public.decorator';
import { SkipRateLimit } from '../http/skip-rate-limit.decorator';
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

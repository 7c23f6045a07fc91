import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { PrometheusController, PrometheusModule } from '@willsoto/nestjs-prometheus';
import type { Response } from 'express';
import { ApiPublicResource } from '../http/api-docs.decorators';
import { Public } from '../http/public.decorator';

/** Prometheus text format at `/api/metrics`, unauthenticated like health, for scrapers inside the network. */
@ApiPublicResource('Health')
@Public()
@SkipThrottle()
@Controller()
export class MetricsController extends PrometheusController {
  @Get()
  @ApiOperation({ operationId: 'metrics', summary: 'Prometheus metrics of this process' })
  @ApiOkResponse({
    description: 'Prometheus metrics (text format)',
    content: { 'text/plain': { schema: { type: 'string' } } },
  })
  override index(@Res({ passthrough: true }) response: Response) {
    return super.index(response);
  }
}

export const MetricsModule = PrometheusModule.register({
  path: '/metrics',
  controller: MetricsController,
  defaultMetrics: { enabled: true },
});

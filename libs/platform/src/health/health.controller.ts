import { Controller, Get, Inject, Optional, Res } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import type { Response } from 'express';
import { Public } from '../http/public.decorator';
import { HealthReport, HealthService } from './health.service';

/** Extra readiness checks an app adds to the database and Redis ones (the worker adds its queues). */
export const READINESS_CHECKS = Symbol('READINESS_CHECKS');
export type ReadinessChecks = Record<string, () => Promise<Record<string, unknown> | void>>;

@ApiTags('Health')
@Public()
@SkipThrottle()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthService,
    @Optional() @Inject(READINESS_CHECKS) private readonly checks: ReadinessChecks = {},
  ) {}

  /** Liveness: the process answers; no dependency is touched. */
  @Get()
  @ApiOkResponse({ description: 'The process is up' })
  live(): HealthReport {
    return this.health.liveness();
  }

  /** Readiness: Postgres and Redis (and the app's own checks) answer; 503 otherwise. */
  @Get('ready')
  @ApiOkResponse({ description: 'Every dependency answers' })
  @ApiServiceUnavailableResponse({ description: 'A dependency does not answer; see `checks`' })
  async ready(@Res({ passthrough: true }) response: Response): Promise<HealthReport> {
    const report = await this.health.readiness(this.checks);
    response.status(report.status === 'ok' ? 200 : 503);
    return report;
  }
}

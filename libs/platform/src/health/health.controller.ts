import { Controller, Get, Inject, Optional, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiServiceUnavailableResponse } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiPublicResource } from '../http/api-docs.decorators';
import { Public } from '../http/public.decorator';
import { SkipRateLimit } from '../http/skip-rate-limit.decorator';
import { HealthReport, HealthService } from './health.service';

/** Extra readiness checks an app adds to the database and Redis ones (the queue backend; the worker's queues). */
export const READINESS_CHECKS = Symbol('READINESS_CHECKS');
export type ReadinessChecks = Record<string, () => Promise<Record<string, unknown> | void>>;

export class HealthCheckResponse {
  @ApiProperty({ enum: ['up', 'down'] }) status: string;
  @ApiProperty({ type: 'integer', required: false }) latency_ms?: number;
  @ApiProperty({ type: String, required: false, description: 'Why the check failed' }) error?: string;
}

export class HealthReportResponse {
  @ApiProperty({ enum: ['ok', 'error'] }) status: string;

  @ApiProperty({
    type: 'object',
    description:
      'One entry per check (`process`; or `database`, `queue_backend`, `redis` while it carries the queues and, on a worker, `queues`, `schedules`; on an API with read replicas, `database_replicas`)',
    properties: {
      database_replicas: {
        type: 'object',
        description:
          'The read replicas (DATABASE_REPLICA_URLS), only when some are configured: always `up`, as the primary serves every read a replica cannot',
        properties: {
          status: { type: 'string', enum: ['up', 'down'] },
          latency_ms: { type: 'integer' },
          error: { type: 'string' },
          in_use: { type: 'integer', description: 'Replicas that account reads may go to now' },
          replicas: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                replica: { type: 'string', description: 'Host, port and database, without credentials' },
                status: {
                  type: 'string',
                  enum: ['up', 'lagging', 'down'],
                  description: '`lagging`: further behind than DATABASE_REPLICA_MAX_LAG_SECONDS; skipped until back',
                },
                lag_seconds: { type: 'number', description: 'How old the oldest write it has not replayed is' },
                replayed_lsn: { type: 'string', description: 'The WAL position it had replayed at its last check' },
                error: { type: 'string', description: 'Why it is down' },
              },
              required: ['replica', 'status'],
            },
          },
        },
        required: ['status'],
      },
    },
    additionalProperties: {
      type: 'object',
      properties: {
        status: { type: 'string', enum: ['up', 'down'] },
        latency_ms: { type: 'integer' },
        error: { type: 'string' },
      },
      required: ['status'],
      additionalProperties: true,
    },
  })
  checks: Record<string, HealthCheckResponse>;
}

@ApiPublicResource('Health')
@Public()
@SkipRateLimit()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthService,
    @Optional() @Inject(READINESS_CHECKS) private readonly checks: ReadinessChecks = {},
  ) {}

  /** Liveness: the process answers; no dependency is touched. */
  @Get()
  @ApiOperation({ operationId: 'liveness', summary: 'Liveness: the process answers (no dependency is touched)' })
  @ApiOkResponse({ type: HealthReportResponse, description: 'The process is up' })
  live(): HealthReport {
    return this.health.liveness();
  }

  /** Readiness: Postgres, the queue backend (and the app's own checks) answer; 503 otherwise. */
  @Get('ready')
  @ApiOperation({ operationId: 'readiness', summary: 'Readiness: every dependency answers' })
  @ApiOkResponse({ type: HealthReportResponse, description: 'Every dependency answers' })
  @ApiServiceUnavailableResponse({
    type: HealthReportResponse,
    description: 'A dependency does not answer; see `checks`',
  })
  async ready(@Res({ passthrough: true }) response: Response): Promise<HealthReport> {
    const report = await this.health.readiness(this.checks);
    response.status(report.status === 'ok' ? 200 : 503);
    return report;
  }
}

import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, DiscoveryModule } from '@nestjs/core';
import { AppConfig, ConfigModule } from '@app/config';
import { CryptoModule } from '@app/crypto';
import { DatabaseModule } from '@app/database';
import { JobQueue, JobsModule } from '@app/jobs';
import { ModelProviderModule } from '@app/model-provider';
import {
  HttpErrorFilter,
  HealthModule,
  LoggingModule,
  MetricsModule,
  READINESS_CHECKS,
  RedisModule,
} from '@app/platform';
import { MaintenanceModule } from './maintenance/maintenance.module';
import { MaintenanceSchedule } from './maintenance/maintenance-schedule.service';
import { DocumentsModule } from './documents/documents.module';
import { CallsModule } from './calls/calls.module';
import { LeadsModule } from './leads/leads.module';
import { TelephonyModule } from './telephony/telephony.module';
import { DialerModule } from './dialer/dialer.module';
import { JobMetricsModule } from './job-metrics.module';
import { WorkerRunner } from './worker-runner';
import { queueReadinessChecks } from './queue-readiness';

/**
 * The worker: consumes every queue; its only HTTP routes are health checks and metrics. Each feature's module provides
 * the services whose `@HandlesJob` methods the runner finds; it refuses to boot unless together they handle every
 * declared job.
 */
@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot('worker'),
        DatabaseModule.forRoot(),
        RedisModule,
        JobsModule.forRoot(),
        CryptoModule,
        MetricsModule.forRoot('app-port'),
        DiscoveryModule,
        JobMetricsModule,
        MaintenanceModule,
        DocumentsModule,
        TelephonyModule,
        LeadsModule,
        CallsModule,
        DialerModule,
        ModelProviderModule,
        HealthModule.forRoot([
          { provide: READINESS_CHECKS, inject: [JobQueue, AppConfig], useFactory: queueReadinessChecks },
        ]),
      ],
      providers: [WorkerRunner, MaintenanceSchedule, { provide: APP_FILTER, useClass: HttpErrorFilter }],
    };
  }
}

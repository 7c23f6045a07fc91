import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AppConfig, ConfigModule } from '@app/config';
import { CryptoModule } from '@app/crypto';
import { DatabaseModule, ExpiringTokensRepository, IdempotencyKeysRepository } from '@app/database';
import { JobProcessor, JobQueue, JobsModule } from '@app/jobs';
import { ModelProviderModule } from '@app/model-provider';
import {
  ApiExceptionFilter,
  HealthModule,
  LoggingModule,
  MetricsModule,
  READINESS_CHECKS,
  RedisModule,
} from '@app/platform';
import { MaintenanceSchedule } from './maintenance/maintenance-schedule.service';
import { MaintenanceProcessor } from './maintenance/maintenance.processor';
import { DocumentsModule } from './documents/documents.module';
import { DocumentsProcessor, RefreshesProcessor } from './documents/documents.processor';
import { CallsModule, CallsProcessor } from './calls/calls.processor';
import { LeadsModule, LeadsProcessor } from './leads/leads.processor';
import { TelephonyModule } from './telephony/telephony.module';
import { TelephonyProcessor } from './telephony/telephony.processor';
import { DialerModule, DialerProcessor } from './dialer/dialer.processor';
import { JobMetricsModule } from './job-metrics';
import { JOB_PROCESSORS, WorkerRunner } from './worker-runner';
import { queueReadinessChecks } from './queue-readiness';

/** Every queue's consumer; the runner refuses to boot unless together they handle every declared job. */
const processors = [
  MaintenanceProcessor,
  DocumentsProcessor,
  RefreshesProcessor,
  TelephonyProcessor,
  LeadsProcessor,
  CallsProcessor,
  DialerProcessor,
];

/** The worker: consumes every queue; its only HTTP routes are health checks and metrics. */
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
        JobMetricsModule,
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
      providers: [
        MaintenanceProcessor,
        IdempotencyKeysRepository,
        ExpiringTokensRepository,
        {
          provide: JOB_PROCESSORS,
          inject: processors,
          useFactory: (...instances: JobProcessor[]) => instances,
        },
        WorkerRunner,
        MaintenanceSchedule,
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
    };
  }
}

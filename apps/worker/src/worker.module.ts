import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AppConfig, ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/database';
import { JobProcessor, JobQueue, JobsModule } from '@app/jobs';
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
import { DocumentIngestion } from './documents/document-ingestion.service';
import { DocumentStore } from './documents/document-store.service';
import { DocumentSweeper } from './documents/document-sweeper.service';
import { DocumentsProcessor } from './documents/documents.processor';
import { OutboundHttp } from './documents/outbound-http.provider';
import { JOB_PROCESSORS, WorkerRunner } from './worker-runner';
import { queueReadinessChecks } from './queue-readiness';

const processors = [MaintenanceProcessor, DocumentsProcessor];

/** The worker: consumes every queue; its only HTTP routes are health checks. */
@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot('worker'),
        DatabaseModule,
        RedisModule,
        JobsModule.forRoot(),
        MetricsModule,
        HealthModule.forRoot([{ provide: READINESS_CHECKS, inject: [JobQueue], useFactory: queueReadinessChecks }]),
      ],
      providers: [
        ...processors,
        {
          provide: JOB_PROCESSORS,
          inject: processors,
          useFactory: (...instances: JobProcessor[]) => instances,
        },
        WorkerRunner,
        DocumentIngestion,
        DocumentStore,
        DocumentSweeper,
        OutboundHttp,
        MaintenanceSchedule,
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
    };
  }
}

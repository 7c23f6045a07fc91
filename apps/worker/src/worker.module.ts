import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AppConfig, ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/database';
import { JobQueue, JobsModule } from '@app/jobs';
import { ApiExceptionFilter, HealthModule, LoggingModule, READINESS_CHECKS, RedisModule } from '@app/platform';
import { MaintenanceSchedule } from './maintenance/maintenance-schedule.service';
import { MaintenanceProcessor } from './maintenance/maintenance.processor';
import { JOB_PROCESSORS, ProcessorRegistry } from './processor-registry';
import { queueReadinessChecks } from './queue-readiness';

const processors = [MaintenanceProcessor];

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
        HealthModule.forRoot([{ provide: READINESS_CHECKS, inject: [JobQueue], useFactory: queueReadinessChecks }]),
      ],
      providers: [
        ...processors,
        {
          provide: JOB_PROCESSORS,
          inject: processors,
          useFactory: (...instances: MaintenanceProcessor[]) => instances,
        },
        ProcessorRegistry,
        MaintenanceSchedule,
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
    };
  }
}

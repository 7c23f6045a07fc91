import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { JobQueue } from './job-queue.service';
import { LiveSignals } from './live-signals';
import { QueueBackend } from './queue-backend';

/** Provides the queue backend chosen by QUEUE_BACKEND and the typed producer over it, to every module. */
@Module({})
export class JobsModule {
  static forRoot(): DynamicModule {
    return {
      module: JobsModule,
      global: true,
      providers: [
        { provide: QueueBackend, inject: [AppConfig], useFactory: (config: AppConfig) => new QueueBackend(config) },
        JobQueue,
        LiveSignals,
      ],
      exports: [QueueBackend, JobQueue, LiveSignals],
    };
  }
}

import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, redisOptionsFromUrl } from '@app/config';
import { Queues } from './job-definitions';
import { JobQueue } from './job-queue.service';

/** Connects BullMQ (with the configured key prefix) and registers every queue for producers. */
@Module({})
export class JobsModule {
  static forRoot(): DynamicModule {
    const queues = Object.values(Queues).map((name) => BullModule.registerQueue({ name }));
    return {
      module: JobsModule,
      global: true,
      imports: [
        BullModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            prefix: config.queuePrefix,
            // Producers fail fast while Redis is away (the caller gets a 503) instead of queueing commands.
            connection: { ...redisOptionsFromUrl(config.redisUrl), enableOfflineQueue: false },
          }),
        }),
        ...queues,
      ],
      providers: [JobQueue],
      exports: [JobQueue, ...queues],
    };
  }
}

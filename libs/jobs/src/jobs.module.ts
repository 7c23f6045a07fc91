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
            connection: { ...redisOptionsFromUrl(config.redisUrl), maxRetriesPerRequest: null },
          }),
        }),
        ...queues,
      ],
      providers: [JobQueue],
      exports: [JobQueue, ...queues],
    };
  }
}

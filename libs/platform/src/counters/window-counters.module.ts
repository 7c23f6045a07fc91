import { Global, Logger, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { PostgresWindowCounters, RedisWindowCounters, WindowCounters } from './window-counters';

/** Provides WindowCounters on the store that carries the queues: Redis, or Postgres when QUEUE_BACKEND=postgres. */
@Global()
@Module({
  providers: [
    {
      provide: WindowCounters,
      inject: [AppConfig, DataSource],
      useFactory: (config: AppConfig, dataSource: DataSource) => {
        if (config.queueBackend === 'postgres') return new PostgresWindowCounters(dataSource, config);
        // Without a listener ioredis prints every failed reconnect as a plain-text stack, outside the JSON log.
        const logger = new Logger('WindowCounters');
        let lastWarning = 0;
        return new RedisWindowCounters(config, (error) => {
          if (Date.now() - lastWarning < 10_000) return;
          lastWarning = Date.now();
          logger.warn({ error: error.message }, 'redis connection error');
        });
      },
    },
  ],
  exports: [WindowCounters],
})
export class WindowCountersModule {}

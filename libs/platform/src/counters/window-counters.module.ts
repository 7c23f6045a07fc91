import { Global, Logger, Module } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { RateWindowsRepository } from '@app/database';
import { PostgresWindowCounters, RedisWindowCounters, WindowCounters } from './window-counters';

/** Provides WindowCounters on the store that carries the queues: Redis, or Postgres when QUEUE_BACKEND=postgres. */
@Global()
@Module({
  providers: [
    {
      provide: WindowCounters,
      inject: [AppConfig, RateWindowsRepository],
      useFactory: (config: AppConfig, windows: RateWindowsRepository) => {
        if (config.queueBackend === 'postgres') return new PostgresWindowCounters(windows, config);
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

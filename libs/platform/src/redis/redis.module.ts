import { Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { AppConfig, redisOptionsFromUrl } from '@app/config';

export const REDIS = Symbol('REDIS');
export const InjectRedis = () => Inject(REDIS);

/** One shared ioredis client for rate limits and health checks (BullMQ keeps its own connections). */
@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => {
        const redis = new Redis({
          ...redisOptionsFromUrl(config.redisUrl),
          lazyConnect: false,
          maxRetriesPerRequest: 2,
        });
        // Without a listener ioredis prints every failed reconnect as a plain-text stack, outside the JSON log.
        const logger = new Logger('Redis');
        redis.on('error', (error: Error) => logger.warn({ error: error.message }, 'redis connection error'));
        return redis;
      },
    },
  ],
  exports: [REDIS],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
